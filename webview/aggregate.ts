/**
 * The attention view's "across heads" row under each kind: the mean of each layer's heads, the
 * mean of all, and for the encoder's self-attention the rollout and flow of webview/lib/aggregate.ts,
 * drawn like the thumbnails above them, with a JSON export of what they show.
 */
import { type Attention, type AttentionKind, findMaps, tokensOf } from '../src/protocol/attention';
import { aggregatesJson, type KindAggregates } from '../src/protocol/export';
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
  if (kind === 'encoder_self' && m.shape[2] <= ROLLOUT_MAX_TOKENS) {
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

/** The row for `kind`, or nothing when the attention has no such maps. */
export function aggregateRow(a: Attention, kind: AttentionKind, size: Size, absolute: boolean): HTMLElement[] {
  const g = kindAggregates(a, kind);
  const m = findMaps(a, kind);
  if (!g || !m) return [];
  const [, , q, k] = m.shape;
  const vmax = absolute ? 1 : undefined;
  const cells = g.meanOfHeads.map((map, l) =>
    thumb(kind, `mean L${l + 1}`, `Layer ${l + 1}: the mean of its heads`, map, q, k, size, vmax),
  );
  cells.push(thumb(kind, 'mean all', 'The mean of every layer and head', g.meanOfLayers, q, k, size, vmax));
  if (g.rollout)
    cells.push(
      thumb(kind, 'rollout', 'Attention rollout: ½A + ½I multiplied through the layers', g.rollout, q, k, size, vmax),
    );
  if (g.flow) cells.push(thumb(kind, 'flow', 'Attention flow: max-flow through ½A + ½I', g.flow, q, k, size, vmax));
  const note =
    kind !== 'encoder_self'
      ? ''
      : !g.rollout
        ? ` · no rollout past ${ROLLOUT_MAX_TOKENS} tokens`
        : g.flow === null
          ? ' · no flow past 64 tokens'
          : '';
  const button = h('button', { class: 'small', title: 'These maps as JSON' }, 'JSON');
  button.addEventListener('click', () => {
    const text = aggregatesJson(a, kind, g);
    post({ type: 'export', format: 'json', name: `${kind}-across-heads-step${a.source.step}.json`, text });
  });
  const { queryTokens } = tokensOf(a, kind);
  return [
    h('div', { class: 'aggregate-head muted' }, `Across heads (${queryTokens.length} × ${k})${note} `, button),
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
