/**
 * The head inspector's per-row charts of one head's weights: the entropy of each query row (a
 * plotly bar chart, one call queued at a time) and the top-k keys of each query (a table).
 */
import type { HeadMap } from '../../src/protocol/attention';
import { PLOTLY_CONFIG, h, plotly, plotlyText, readTheme, themedLayout } from '../common';
import { rowEntropy, topK } from '../lib/attention';

/** How many keys the top-k table lists per query. */
export const K = 3;

/** The map whose entropy the next plotly call draws; null when none waits (calls never pile up behind a slow one). */
let entropyNext: HeadMap | null = null;
export function drawEntropy(entropyChart: HTMLElement, map: HeadMap): void {
  const idle = entropyNext === null;
  entropyNext = map;
  if (idle)
    void plotly(() => {
      const m = entropyNext!;
      entropyNext = null;
      return reactEntropy(entropyChart, m);
    });
}

function reactEntropy(entropyChart: HTMLElement, map: HeadMap): Promise<unknown> {
  const ent = rowEntropy(map.weights, map.queries, map.keys);
  const labels = map.queryTokens.map((tok, i) => `${plotlyText(tok)} ‹${i}›`);
  const t = readTheme();
  const uniform = Math.log(map.keys);
  return Plotly.react(
    entropyChart,
    [
      {
        type: 'bar',
        orientation: 'h',
        x: Array.from(ent),
        y: labels,
        marker: { color: t.accent },
        hovertemplate: '%{y}: %{x:.3f} nats<extra></extra>',
        name: 'entropy',
      },
      {
        type: 'scatter',
        mode: 'lines',
        x: [uniform, uniform],
        y: [labels[0], labels[labels.length - 1]],
        line: { color: t.muted, dash: 'dot' },
        name: `uniform (ln ${map.keys})`,
        hoverinfo: 'skip',
      },
    ],
    themedLayout(t, 'entropy', {
      yaxis: { type: 'category', autorange: 'reversed' },
      xaxis: { rangemode: 'tozero', title: { text: 'nats' } },
      showlegend: true,
      height: Math.min(1200, Math.max(240, 16 * labels.length + 80)),
    }),
    PLOTLY_CONFIG,
  );
}

export function drawTopK(topTable: HTMLElement, map: HeadMap): void {
  const rowsShown = Math.min(map.queries, 128);
  const body: HTMLElement[] = [
    h('tr', {}, h('th', {}, 'query'), ...Array.from({ length: K }, (_, i) => h('th', {}, `#${i + 1}`))),
  ];
  for (let q = 0; q < rowsShown; q++) {
    const best = topK(map.weights, q, map.keys, K);
    body.push(
      h(
        'tr',
        {},
        h('td', {}, `${map.queryTokens[q]} ‹${q}›`),
        ...best.map((b) => h('td', {}, `${map.keyTokens[b.key]} ‹${b.key}› ${b.weight.toFixed(3)}`)),
      ),
    );
  }
  if (rowsShown < map.queries)
    body.push(
      h(
        'tr',
        {},
        h('td', { colspan: String(K + 1), class: 'muted' }, `… ${map.queries - rowsShown} more queries (export CSV)`),
      ),
    );
  topTable.replaceChildren(...body);
}
