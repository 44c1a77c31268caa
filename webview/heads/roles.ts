/**
 * The Heads panel's roles over training (issue 32, docs/TELEMETRY.md "Roles over training"): the
 * training loss with its drops and plateaus marked, and under it, on the same step axis, one
 * swimlane per head coloured by its role at each telemetry row (plotly horizontal bars); beside it,
 * each drop with the heads that changed across it ("explain this drop"). A click on the loss, a lane
 * or a drop moves every view to that step; a click on a listed head opens it there.
 */
import type { MetricRow } from '../../src/protocol/metrics';
import { positionalOffset, type Role, type ROLES } from '../../src/protocol/roles';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import { PLOTLY_CONFIG, type Theme, h, plotly, purgeOnUnload, readTheme, themedLayout } from '../common';
import { column, downsampleMinMax } from '../lib/downsample';
import { lineTrace } from '../lib/lineTrace';
import { type LossPhase, lossPhases } from '../lib/lossPhases';
import { type DropExplained, type Lane, explainDrop, laneRank, roleLanes } from '../lib/roleLanes';

export interface RolesInput {
  telemetry: readonly TelemetryRow[];
  metrics: readonly MetricRow[];
  /** The heads to draw, in order (the map's sorting and filter). */
  heads: readonly string[];
  run: string;
  cursor: number | null;
  hover: number | null;
}

/**
 * Each role's colour: VS Code's chart colours where the theme has them; no role is the grid's.
 * Positional ±k (k ≥ 2) takes the colour of its direction's `k` entry.
 */
const ROLE_VARS: Record<(typeof ROLES)[number] | 'positional -k' | 'positional +k', [string, string]> = {
  dead: ['--vscode-charts-red', '#f14c4c'],
  'aligned (task)': ['--vscode-charts-green', '#89d185'],
  mirrored: ['--vscode-charts-purple', '#b180d7'],
  aligned: ['--vscode-charts-blue', '#3794ff'],
  'positional -1': ['--vscode-charts-yellow', '#cca700'],
  'positional +1': ['--vscode-charts-orange', '#d18616'],
  'positional -k': ['--vscode-terminal-ansiMagenta', '#bc3fbc'],
  'positional +k': ['--vscode-terminal-ansiBrightBlue', '#3b8eea'],
  sink: ['--vscode-terminal-ansiCyan', '#11a8cd'],
  diffuse: ['--vscode-descriptionForeground', '#9d9d9d'],
};
export function roleColor(role: Role | null, t: Theme): string {
  if (role === null) return t.grid;
  const d = positionalOffset(role);
  const key = d !== undefined && Math.abs(d) > 1 ? (d < 0 ? 'positional -k' : 'positional +k') : role;
  const [name, fallback] = ROLE_VARS[key as keyof typeof ROLE_VARS];
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

const LANE_H = 14;
const LOSS_H = 180;
const MARGIN = { l: 120, r: 16, t: 28, b: 84 };

const chart = h('div', { id: 'roles-chart' });
const caption = h('div', { class: 'muted', id: 'roles-caption' });
const drops = h('ol', { class: 'problems', id: 'roles-drops', style: 'max-height:none' });
export const rolesCard = h(
  'section',
  { class: 'card', id: 'roles-card' },
  h('header', {}, h('h2', {}, 'Roles over training')),
  caption,
  h(
    'div',
    { style: 'display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start' },
    h('div', { style: 'flex:1 1 480px;min-width:0' }, chart),
    h('div', { style: 'flex:1 1 260px;max-width:420px' }, h('h3', {}, 'Explain this drop'), drops),
  ),
);

/** What was drawn last: the drops found and their explanations, for the page's drawn report. */
export let shownDrops: { drop: LossPhase; why: DropExplained | undefined }[] = [];
/** The lanes plotly last drew (0 until it has drawn), for the page's drawn report. */
export let drawnLanes = 0;

/** Wires the chart's clicks once: `onStep` moves every view, `onHead` opens a head at a step. */
export function wireRoles(onStep: (step: number) => void): void {
  purgeOnUnload(chart);
  void plotly(() => Plotly.react(chart, [], themedLayout(readTheme(), 'roles'), PLOTLY_CONFIG)).then((gd) =>
    gd?.on('plotly_click', (e) => {
      const p = (e as { points?: { x?: unknown; customdata?: unknown; data?: { type?: string } }[] }).points?.[0];
      // A lane's bar: the step its segment starts (where the head took that role); the loss: the point's step.
      const step = Number(p?.data?.type === 'bar' ? (p.customdata as unknown[] | undefined)?.[0] : p?.x);
      if (Number.isInteger(step) && step >= 0) onStep(step);
    }),
  );
}

/** The lanes as one horizontal bar trace per role (segments of no width get the next row's gap). */
function laneTraces(lanes: Lane[], t: Theme): Plotly.Data[] {
  const byRole = new Map<Role | null, { x: number[]; base: number[]; y: string[]; customdata: unknown[] }>();
  for (const lane of lanes) {
    const gap = lane.segments.length > 1 ? lane.segments[1]!.from - lane.segments[0]!.from : 1;
    for (const s of lane.segments) {
      const b = byRole.get(s.role) ?? { x: [], base: [], y: [], customdata: [] };
      byRole.set(s.role, b);
      b.x.push(Math.max(s.to - s.from, s.to === s.from ? gap / 2 : 0));
      b.base.push(s.from);
      b.y.push(lane.head);
      b.customdata.push([s.from, s.to]);
    }
  }
  return [...byRole.keys()]
    .sort((a, b) => (a === null ? Infinity : laneRank(a)) - (b === null ? Infinity : laneRank(b)))
    .map((role) => ({
      type: 'bar',
      orientation: 'h',
      ...byRole.get(role)!,
      yaxis: 'y2',
      name: role ?? 'no role',
      marker: { color: roleColor(role, t), line: { width: 0 } },
      hovertemplate: `%{y}<br>${role ?? 'no role'}<br>steps %{customdata[0]}–%{customdata[1]}<extra></extra>`,
    }));
}

const fmt = (v: number | null) => (v === null ? '—' : v.toFixed(2));

/** The drops beside the chart, each with its heads; a drop moves every view to its steepest step. */
function listDrops(onStep: (step: number) => void, onHead: (head: string, step: number) => void): void {
  drops.replaceChildren(
    ...shownDrops.map(({ drop, why }, i) => {
      const item = h(
        'div',
        { class: 'problem', 'data-step': String(drop.at), title: `Move every view to step ${drop.at}` },
        `Drop ${i + 1} · steps ${drop.from}–${drop.to} · loss ${drop.lossFrom.toFixed(3)} → ${drop.lossTo.toFixed(3)}`,
      );
      item.addEventListener('click', () => onStep(drop.at));
      const heads = (why?.heads ?? []).map((c) => {
        const roles = (r: string[]) => (r.length ? r.join(', ') : 'no role');
        const changed = roles(c.before) !== roles(c.after) ? `${roles(c.before)} → ${roles(c.after)} · ` : '';
        const li = h(
          'li',
          { class: 'problem drop-head', title: `Open ${c.head} at step ${why!.after}` },
          `${c.head}: ${changed}${c.stat} ${fmt(c.from)} → ${fmt(c.to)}`,
        );
        li.addEventListener('click', () => onHead(c.head, why!.after));
        return li;
      });
      const note = why
        ? `rows ${why.before} → ${why.after}${heads.length ? '' : ': no head changed'}`
        : 'no telemetry rows on both sides of it';
      return h('li', {}, item, h('div', { class: 'muted' }, note), h('ul', { class: 'problems' }, ...heads));
    }),
  );
  if (!shownDrops.length)
    drops.replaceChildren(h('li', { class: 'muted', style: 'list-style:none' }, 'No loss drop found yet.'));
}

/** Draws the section from the page's state. */
export function drawRoles(
  input: RolesInput,
  onStep: (step: number) => void,
  onHead: (head: string, step: number) => void,
): void {
  const t = readTheme();
  const keep = new Set(input.heads);
  const lanes = roleLanes(input.telemetry).filter((l) => keep.has(l.head));
  lanes.sort((a, b) => input.heads.indexOf(a.head) - input.heads.indexOf(b.head));
  const phases = lossPhases(input.metrics);
  shownDrops = phases
    .filter((p) => p.kind === 'drop')
    .map((drop) => ({ drop, why: explainDrop(input.telemetry, drop) }));
  listDrops(onStep, onHead);
  const steps = input.telemetry.map((r) => r.step);
  caption.textContent = `${input.run} · the training loss (${input.metrics.length} logged steps) and each head's role at ${steps.length} telemetry rows of the probe batch · shaded: loss drops (orange) and plateaus (grey) · click the loss, a lane or a drop to move every view to that step`;

  const plotH = LOSS_H + 16 + Math.max(1, lanes.length) * LANE_H;
  const split = 1 - LOSS_H / plotH;
  const loss = column(
    input.metrics,
    (r) => r.step,
    (r) => r.loss,
  );
  const data = [lineTrace(downsampleMinMax(loss.x, loss.y), 'loss', t.accent), ...laneTraces(lanes, t)];
  const band = (p: LossPhase, color: string, y0: number, opacity: number): object => ({
    type: 'rect',
    xref: 'x',
    x0: p.from,
    x1: p.to,
    yref: 'paper',
    y0,
    y1: 1,
    fillcolor: color,
    opacity,
    line: { width: 0 },
    layer: 'below',
  });
  const line = (step: number, color: string, dash: string): object => ({
    type: 'line',
    x0: step,
    x1: step,
    yref: 'paper',
    y0: 0,
    y1: 1,
    line: { color, width: 1.5, dash },
  });
  const shapes = [
    ...phases.map((p) => (p.kind === 'drop' ? band(p, t.accent2, 0, 0.2) : band(p, t.muted, split, 0.08))),
    ...(input.cursor === null ? [] : [line(input.cursor, t.accent2, 'solid')]),
    ...(input.hover === null || input.hover === input.cursor ? [] : [line(input.hover, '#ff9f1c', 'dot')]),
  ];
  const annotations = shownDrops.map(({ drop }, i) => ({
    x: drop.at,
    y: 1,
    yref: 'paper',
    yanchor: 'bottom',
    yshift: (i % 2) * 12, // neighbours apart
    text: `drop ${i + 1}`,
    showarrow: false,
    font: { color: t.accent2 },
  }));
  const layout = themedLayout(t, 'roles', {
    height: plotH + MARGIN.t + MARGIN.b,
    ...(chart.clientWidth > 0 ? { width: chart.clientWidth } : {}),
    margin: MARGIN,
    barmode: 'overlay',
    bargap: 0.15,
    showlegend: true,
    legend: { orientation: 'h', x: 0, y: -52 / plotH, yanchor: 'top', font: { color: t.fg } },
    xaxis: { title: { text: 'step' }, anchor: 'y2', automargin: false },
    yaxis: { domain: [split, 1], title: { text: 'loss' }, automargin: false },
    yaxis2: {
      domain: [0, split - 16 / plotH],
      type: 'category',
      categoryorder: 'array',
      categoryarray: lanes.map((l) => l.head),
      // Every lane named: plotly's own spacing names every other one of 14 px lanes.
      tickmode: 'array',
      tickvals: lanes.map((l) => l.head),
      autorange: 'reversed',
      color: t.fg,
      gridcolor: t.grid,
      tickfont: { size: 10 },
      automargin: false,
    },
    shapes,
    annotations,
  });
  void plotly(async () => {
    await Plotly.react(chart, data, layout, PLOTLY_CONFIG);
    drawnLanes = lanes.length;
    document.body.dataset.rolesDrawn = String(Number(document.body.dataset.rolesDrawn ?? '0') + 1);
  });
}
