/**
 * The dashboard's charts with other runs drawn on them (Compare Runs, a fork over its parent), kept
 * readable with many runs: the legend under the plot, which plotly shrinks to make room (never
 * over the curves); one legend entry per run (its validation points toggle with it); the y axis
 * clipped to the runs that stay in range when a run leaves it (a diverged one, marked `clipped` in
 * its legend name); the selected run drawn last, on top and thicker; a fork's parent thinner and
 * dimmed, so the fork's curve, which continues it, stays visible over it.
 */
import { clippedRange } from '../lib/clip';

/** The selected run's line width when other runs are drawn (1.5 alone). */
const SELECTED_WIDTH = 2.5;
const PARENT = { width: 1, opacity: 0.45 };

export interface ComparedChart {
  data: Plotly.Data[];
  /** The legend's place, and the y range when a run is clipped. */
  layout: Plotly.Layout;
}

type Trace = Plotly.Data & {
  y?: number[];
  name?: string;
  legendgroup?: string;
  line?: Record<string, unknown>;
  showlegend?: boolean;
};

/**
 * `own`: the selected run's traces; `others`: overlays.ts's traces of the other runs (each with
 * its run folder as legendgroup); `parent`: the selected fork's parent folder, if it is one.
 * `clip`: whether a run far out of the others' range is clipped (loss, gradient norm).
 */
export function compareChart(
  own: Plotly.Data[],
  others: Plotly.Data[],
  parent: string | undefined,
  clip: boolean,
): ComparedChart {
  if (others.length === 0) return { data: own, layout: {} };
  const mine = (own as Trace[]).map((t) => ({
    ...t,
    legendgroup: 'selected',
    legendrank: 1, // listed first, drawn last
    line: { ...(t.line ?? {}), width: SELECTED_WIDTH },
  }));
  const seen = new Set<string>();
  const theirs = (others as Trace[]).map((t) => {
    const group = t.legendgroup ?? String(t.name);
    const first = !seen.has(group);
    seen.add(group);
    const dim = group === parent ? { opacity: PARENT.opacity, line: { ...(t.line ?? {}), width: PARENT.width } } : {};
    return { ...t, ...dim, showlegend: first };
  });
  // The parent under every other run; the selected run over all of them.
  const data: Trace[] = [
    ...theirs.filter((t) => t.legendgroup === parent),
    ...theirs.filter((t) => t.legendgroup !== parent),
    ...mine,
  ];
  const layout: Plotly.Layout = {
    // Under the plot, at the chart's bottom edge: plotly reserves the room it takes (yref container).
    // maxheight: every entry shown (the chart grows to fit them: fitLegend), none behind a scroll bar.
    legend: { orientation: 'h', x: 0, xanchor: 'left', y: 0, yanchor: 'bottom', yref: 'container', maxheight: 4000 },
    showlegend: true,
  };
  if (!clip) return { data, layout };
  const groups = [...new Set(data.map((t) => String(t.legendgroup)))];
  const { range, clipped } = clippedRange(
    groups.map((g) => data.filter((t) => t.legendgroup === g).flatMap((t) => t.y ?? [])),
  );
  if (!range) return { data, layout };
  // Each clipped run says so in its legend entry, with the highest value it reached.
  for (const [i, max] of clipped) {
    const entry = data.find((t) => t.legendgroup === groups[i] && t.showlegend !== false);
    if (entry) entry.name = `${entry.name} (clipped: up to ${Number(max.toPrecision(3))})`;
  }
  return { data, layout: { ...layout, yaxis: { range, autorange: false } } };
}

/** A chart's height alone (html.ts `.chart`); with a legend under it, it grows by the legend's. */
const CHART_HEIGHT = 300;
/** A legend row's height at most (plotly's rows are about 29 px at the panels' font). */
const ROW = 32;
/** Each chart's legend height as plotly last drew it. */
const drawnLegend = new WeakMap<HTMLElement, number>();

/**
 * The chart's height for plotly to draw `data` with its legend under the plot (`compare`): its own
 * plus the legend's as last drawn, or a row per entry before there is one (a plot area of no height
 * fails plotly). Sets the element's height to match; {} without other runs (plotly sizes to the element).
 */
export function legendRoom(el: HTMLElement, data: Plotly.Data[], compare: boolean): { height?: number } {
  if (!compare) {
    el.style.height = '';
    return {};
  }
  const entries = (data as Trace[]).filter((t) => t.showlegend !== false).length;
  const height = CHART_HEIGHT + (drawnLegend.get(el) ?? ROW * entries);
  el.style.height = `${height}px`;
  return { height };
}

/** After Plotly.react: the chart fits the legend as plotly drew it, so the plot area keeps its own height. */
export async function fitLegend(el: HTMLElement, compare: boolean): Promise<void> {
  const legend = compare ? el.querySelector<SVGGraphicsElement>('g.legend') : null;
  if (!legend) return;
  const room = Math.ceil(legend.getBBox().height);
  if (drawnLegend.get(el) === room) return;
  drawnLegend.set(el, room);
  el.style.height = `${CHART_HEIGHT + room}px`;
  await Plotly.relayout(el, { height: CHART_HEIGHT + room });
}
