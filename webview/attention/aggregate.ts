/**
 * The attention view's "across heads" row under each kind: the mean of each layer's heads, the
 * mean of all, and for the encoder's self-attention the rollout and flow of webview/lib/aggregate.ts,
 * drawn like the thumbnails above them, with a JSON export of what they show.
 *
 * Pooled maps (inputs past 256 tokens, src/algorithms/pool.ts) hold each block's largest weight, so
 * their rows do not sum to 1: rollout and flow of them would mean nothing (products of maxima grow
 * without bound), and are left out with a note; the means are drawn and named for what they are,
 * means of the heads' pooled maxima over cells, not of weights over tokens (and not exported).
 */
import { type Attention, type AttentionKind, findMaps, tokensOf } from '../../src/protocol/attention';
import { aggregatesJson, type KindAggregates } from '../../src/protocol/export';
import { type Pool, POOL_ABOVE } from '../../src/algorithms/pool';
import { h, post } from '../common';
import { drawHeatmap } from '../heatmap';
import { drawNow, lazyPart, markStale } from './lazyParts';
import { attentionFlow, attentionRollout, FLOW_MAX_TOKENS, meanOverHeads } from '../lib/aggregate';

/** Rollout is n³ a layer: past this many tokens the row leaves it out, and says so. */
export const ROLLOUT_MAX_TOKENS = 256;

interface Size {
  width: number;
  height: number;
}

/** One labelled map of a kind's row, drawn later (its canvas already the thumbnails' size). */
function thumb(kind: AttentionKind, name: string, title: string, q: number, k: number, size: Size) {
  const canvas = h('canvas', {
    class: 'aggregate',
    width: String(size.width),
    height: String(size.height),
    'data-kind': kind,
    'data-aggregate': name,
    'data-queries': String(q),
    'data-keys': String(k),
    title,
    style: `width:${size.width}px;height:${size.height}px`,
  });
  return { canvas, cell: h('div', { class: 'thumb-cell' }, canvas, h('div', { class: 'aggregate-label' }, name)) };
}

/** The row's heading: what its maps are, of how many tokens or cells, and what it leaves out. */
function heading(
  a: Attention,
  kind: AttentionKind,
  q: number,
  k: number,
  rollout: boolean,
  flow: boolean,
  pool?: Pool,
) {
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
      : !rollout
        ? ` · no rollout past ${ROLLOUT_MAX_TOKENS} tokens`
        : !flow
          ? ` · no flow past ${FLOW_MAX_TOKENS} tokens`
          : '';
  return `Across heads (${queryTokens.length} × ${keyTokens.length})${note} `;
}

/** A kind's across-heads row, kept from one snapshot of its shape to the next. */
export interface AggregateRow {
  /** The heading and the maps, to append under the kind's grid. */
  els: HTMLElement[];
  /** A new snapshot of the same shape: `changed[l]` when a head of layer l changed; the scale. */
  update(a: Attention, changed: readonly boolean[], absolute: boolean): void;
}

/**
 * The row for `kind`, or null when the attention has no such maps. Its maps are computed and drawn
 * when the row is on screen (lazyParts.ts), once per snapshot, and only those a changed layer feeds:
 * that layer's mean, and the mean of all, rollout and flow.
 */
export function aggregateRow(a: Attention, kind: AttentionKind, size: Size, absolute: boolean): AggregateRow | null {
  const m0 = findMaps(a, kind);
  if (!m0) return null;
  const [layers, , q, k] = m0.shape;
  const rollout = kind === 'encoder_self' && !m0.pool && q <= ROLLOUT_MAX_TOKENS;
  const flow = rollout && q <= FLOW_MAX_TOKENS;
  const of = m0.pool ? "its heads' pooled maxima" : 'its heads';
  const means = Array.from({ length: layers }, (_, l) =>
    thumb(kind, `mean L${l}`, `Layer ${l}: the mean of ${of}`, q, k, size),
  );
  const all = thumb(
    kind,
    'mean all',
    m0.pool ? "The mean of every layer's and head's pooled maxima" : 'The mean of every layer and head',
    q,
    k,
    size,
  );
  const roll = rollout
    ? thumb(kind, 'rollout', 'Attention rollout: ½A + ½I multiplied through the layers', q, k, size)
    : null;
  const fl = flow ? thumb(kind, 'flow', 'Attention flow: max-flow through ½A + ½I', q, k, size) : null;
  const cells = [...means, all, ...(roll ? [roll] : []), ...(fl ? [fl] : [])];

  let cur = a;
  let scale = absolute;
  let redrawAll = true;
  const stale = new Set(Array.from({ length: layers }, (_, l) => l));
  const g: KindAggregates = { meanOfHeads: [], meanOfLayers: new Float32Array(q * k) };
  const paint = (c: { canvas: HTMLCanvasElement }, map: Float32Array) => {
    drawHeatmap(c.canvas, map, q, k, size.width, size.height, scale ? 1 : undefined);
    c.canvas.dataset.drawn = '1';
  };
  const draw = () => {
    const m = findMaps(cur, kind)!;
    const redo = [...stale].sort((x, y) => x - y);
    stale.clear();
    for (const l of redo) g.meanOfHeads[l] = meanOverHeads(m.weights, m.shape, l);
    const derived = redo.length > 0;
    if (derived) {
      // The mean of all: the mean of the layers' means (equal counts of heads), as meanOverLayers sums it.
      const sum = new Float32Array(q * k);
      for (let l = 0; l < layers; l++) for (let i = 0; i < q * k; i++) sum[i] += g.meanOfHeads[l]![i]! / layers;
      g.meanOfLayers = sum;
      if (rollout) g.rollout = attentionRollout(m.weights, m.shape);
      if (rollout) g.flow = attentionFlow(m.weights, m.shape);
    }
    means.forEach((c, l) => (redrawAll || redo.includes(l)) && paint(c, g.meanOfHeads[l]!));
    if (!derived && !redrawAll) return;
    paint(all, g.meanOfLayers);
    if (roll && g.rollout) paint(roll, g.rollout);
    if (fl && g.flow) paint(fl, g.flow);
    redrawAll = false;
  };
  const head = h('div', { class: 'aggregate-head muted' }, heading(a, kind, q, k, rollout, flow, m0.pool));
  const grid = h(
    'div',
    {
      class: 'thumb-grid aggregates',
      'data-kind': kind,
      style: `grid-template-columns: repeat(${cells.length}, ${size.width}px)`,
    },
    ...cells.map((c) => c.cell),
  );
  if (!m0.pool) {
    // The export writes rows of tokens (src/protocol/export.ts): only whole maps have them.
    const button = h('button', { class: 'small', title: 'These maps as JSON' }, 'JSON');
    button.addEventListener('click', () => {
      drawNow(grid); // what is exported is the snapshot shown, even if the row was never on screen
      const text = aggregatesJson(cur, kind, g);
      post({ type: 'export', format: 'json', name: `${kind}-across-heads-step${cur.source.step}.json`, text });
    });
    head.append(button);
  }
  lazyPart(grid, draw);
  return {
    els: [head, grid],
    update(next, changed, abs) {
      cur = next;
      changed.forEach((c, l) => c && stale.add(l));
      if (abs !== scale) redrawAll = true;
      scale = abs;
      if (stale.size || redrawAll) markStale(grid);
    },
  };
}
