/**
 * The attention view's "across heads" row under each kind: the mean of each layer's heads, the
 * mean of all, and for the encoder's self-attention the rollout and flow of webview/lib/aggregate.ts,
 * drawn like the thumbnails above them, with a JSON export of what they show.
 *
 * Pooled maps (inputs past 256 tokens, src/protocol/pool.ts) hold each block's largest weight, so
 * their rows do not sum to 1: rollout and flow of them would mean nothing (products of maxima grow
 * without bound), and are left out with a note; the means are drawn and named for what they are,
 * means of the heads' pooled maxima over cells, not of weights over tokens (and not exported).
 */
import { type Attention, type AttentionKind, findMaps, tokensOf } from '../src/protocol/attention';
import { aggregatesJson, type KindAggregates } from '../src/protocol/export';
import { type Pool, POOL_ABOVE } from '../src/protocol/pool';
import { h, post } from './common';
import { drawHeatmap } from './heatmap';
import { attentionFlow, attentionRollout, meanOverHeads, meanOverLayers } from './lib/aggregate';

/** Rollout is n³ a layer: past this many tokens the row leaves it out, and says so. */
export const ROLLOUT_MAX_TOKENS = 256;

function kindAggregates(a: Attention, kind: AttentionKind): KindAggregates | undefined {
  const m = findMaps(a, kind);
  if (!m) return undefined;
  const meanOfHeads = Array.from({ length: m.shape[0] }, (_, l) => meanOverHeads(m.weights, m.shape, l));
  const out: KindAggregates = { meanOfHeads, meanOfLayers: meanOverLayers(m.weights, m.shape) };
  if (kind === 'encoder_self' && !m.pool && m.shape[2] <= ROLLOUT_MAX_TOKENS) {
    out.rollout = attentionRollout(m.weights, m.shape);
    out.flow = attentionFlow(m.weights, m.shape);
  }
  return out;
}

/** One labelled thumbnail of a kind's row. */
function thumb(
  kind: AttentionKind,
  name: string,
  title: string,
  map: Float32Array,
  q: number,
  k: number,
  size: Size,
  vmax?: number,
) {
  const canvas = h('canvas', {
    class: 'aggregate',
    'data-kind': kind,
    'data-aggregate': name,
    'data-queries': String(q),
    'data-keys': String(k),
    title,
    style: `width:${size.width}px;height:${size.height}px`,
  });
  drawHeatmap(canvas, map, q, k, size.width, size.height, vmax);
  canvas.dataset.drawn = '1';
  return h('div', { class: 'thumb-cell' }, canvas, h('div', { class: 'aggregate-label' }, name));
}

interface Size {
  width: number;
  height: number;
}

/** The row's heading: what its maps are, of how many tokens or cells, and what it leaves out. */
function heading(a: Attention, kind: AttentionKind, g: KindAggregates, q: number, k: number, pool?: Pool): string {
  const { queryTokens, keyTokens } = tokensOf(a, kind);
  if (pool)
    return (
      `Across heads: means of the heads' pooled maxima, ${q} × ${k} cells of ${pool.rows}×${pool.cols} tokens ` +
      `(not means of weights)` +
      (kind === 'encoder_self'
        ? ` · no rollout or flow: they need full maps (inputs ≤ ${POOL_ABOVE} tokens a side)`
        : '')
    );
  const note =
    kind !== 'encoder_self'
      ? ''
      : !g.rollout
        ? ` · no rollout past ${ROLLOUT_MAX_TOKENS} tokens`
        : g.flow === null
          ? ' · no flow past 64 tokens'
          : '';
  return `Across heads (${queryTokens.length} × ${keyTokens.length})${note} `;
}

/** The row for `kind`, or nothing when the attention has no such maps. */
export function aggregateRow(a: Attention, kind: AttentionKind, size: Size, absolute: boolean): HTMLElement[] {
  const g = kindAggregates(a, kind);
  const m = findMaps(a, kind);
  if (!g || !m) return [];
  const [, , q, k] = m.shape;
  const vmax = absolute ? 1 : undefined;
  const of = m.pool ? "its heads' pooled maxima" : 'its heads';
  const cells = g.meanOfHeads.map((map, l) =>
    thumb(kind, `mean L${l}`, `Layer ${l}: the mean of ${of}`, map, q, k, size, vmax),
  );
  const all = m.pool ? "The mean of every layer's and head's pooled maxima" : 'The mean of every layer and head';
  cells.push(thumb(kind, 'mean all', all, g.meanOfLayers, q, k, size, vmax));
  if (g.rollout)
    cells.push(
      thumb(kind, 'rollout', 'Attention rollout: ½A + ½I multiplied through the layers', g.rollout, q, k, size, vmax),
    );
  if (g.flow) cells.push(thumb(kind, 'flow', 'Attention flow: max-flow through ½A + ½I', g.flow, q, k, size, vmax));
  const head = h('div', { class: 'aggregate-head muted' }, heading(a, kind, g, q, k, m.pool));
  if (!m.pool) {
    // The export writes rows of tokens (src/protocol/export.ts): only whole maps have them.
    const button = h('button', { class: 'small', title: 'These maps as JSON' }, 'JSON');
    button.addEventListener('click', () => {
      const text = aggregatesJson(a, kind, g);
      post({ type: 'export', format: 'json', name: `${kind}-across-heads-step${a.source.step}.json`, text });
    });
    head.append(button);
  }
  return [
    head,
    h(
      'div',
      {
        class: 'thumb-grid aggregates',
        'data-kind': kind,
        style: `grid-template-columns: repeat(${cells.length}, ${size.width}px)`,
      },
      ...cells,
    ),
  ];
}
