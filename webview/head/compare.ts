/**
 * The inspector's Compare card: the shown step against another snapshot of the same probe pair.
 * It draws the head's difference map (B − A, diverging: red where the other step attends more,
 * blue where less) and ranks every head by how much it changed (Jensen–Shannon divergence averaged
 * over query rows); a click on a ranked head opens it.
 */
import { type Attention, headId, headMap, type HeadRef } from '../../src/protocol/attention';
import { h, poster } from '../common';
import { fitSize } from '../heatmap';
import { diffMap, divergingRgb, headDivergence, incomparable, rankHeads } from '../lib/diff';
import { headPage } from '../../src/protocol/pages/head';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(headPage);

const SIDE = 240;
const RANKED = 8;

export interface CompareCard {
  el: HTMLElement;
  /** Redraws for the frames the slider ranges over, the frame shown and the head. */
  update(frames: Attention[], shown: Attention | undefined, head: HeadRef | null): void;
}

export function compareCard(): CompareCard {
  const select = h('select', { id: 'compare-step', title: 'Another snapshot of this pair to compare with' });
  const canvas = h('canvas', { id: 'diff-map', class: 'big-map' });
  const note = h('div', { class: 'muted', id: 'compare-note' }, 'Pick a step to compare with.');
  const ranking = h('ol', { class: 'ranking', id: 'compare-ranking' });
  const rankTitle = h('div', { class: 'muted' }, 'Heads that changed most (JS divergence, mean over query rows):');
  let last: Parameters<CompareCard['update']> = [[], undefined, null];
  select.addEventListener('change', () => update(...last));
  const el = h(
    'section',
    { class: 'card', id: 'compare' },
    h('header', {}, h('h2', {}, 'Compare with step'), select),
    note,
    canvas,
    rankTitle,
    ranking,
  );

  function update(frames: Attention[], shown: Attention | undefined, head: HeadRef | null): void {
    last = [frames, shown, head];
    const probes = frames.filter((f) => f.source.input === 'probe');
    const wanted = select.value;
    select.replaceChildren(
      h('option', { value: '' }, '—'),
      ...probes.map((f) => h('option', { value: String(f.source.step) }, `step ${f.source.step}`)),
    );
    select.value = probes.some((f) => String(f.source.step) === wanted) ? wanted : '';
    const other = probes.find((f) => String(f.source.step) === select.value);
    ranking.replaceChildren();
    canvas.hidden = true;
    rankTitle.hidden = true;
    if (!other || !shown || !head) {
      note.textContent =
        probes.length < 2 ? 'Only one snapshot: nothing to compare with.' : 'Pick a step to compare with.';
      return;
    }
    const why = incomparable(shown, other);
    if (why) {
      note.textContent = `Cannot compare: ${why}.`;
      return;
    }
    const a = headMap(shown, head)!;
    const b = headMap(other, head)!;
    const d = diffMap(a.weights, b.weights);
    const maxAbs = d.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    drawDiverging(canvas, d, a.queries, a.keys, maxAbs);
    canvas.hidden = false;
    canvas.dataset.maxAbs = String(maxAbs);
    const js = headDivergence(a.weights, b.weights, a.queries, a.keys);
    note.textContent =
      `step ${other.source.step} − step ${shown.source.step}: red where step ${other.source.step} attends more ` +
      `(up to ${maxAbs.toFixed(3)}), blue where less · JS divergence ${js.toFixed(4)}`;
    rankTitle.hidden = false;
    for (const r of rankHeads(shown, other).slice(0, RANKED)) {
      const item = h('li', { class: 'problem' }, `${headId(r)}: ${r.js.toFixed(4)}`);
      item.addEventListener('click', () => ask({ type: 'openHead', kind: r.kind, layer: r.layer, head: r.head }));
      ranking.append(item);
    }
  }
  return { el, update };
}

/** Draws a difference map cell by cell (nearest), ±maxAbs to the diverging scale's ends. */
function drawDiverging(canvas: HTMLCanvasElement, d: Float32Array, q: number, k: number, maxAbs: number): void {
  const { width, height } = fitSize(q, k, SIDE);
  canvas.width = width;
  canvas.height = height;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const img = canvas.getContext('2d')!.createImageData(width, height);
  for (let y = 0; y < height; y++) {
    const r = Math.min(q - 1, Math.floor((y * q) / height));
    for (let x = 0; x < width; x++) {
      const c = Math.min(k - 1, Math.floor((x * k) / width));
      const [R, G, B] = divergingRgb(maxAbs > 0 ? d[r * k + c]! / maxAbs : 0);
      const o = (y * width + x) * 4;
      img.data[o] = R;
      img.data[o + 1] = G;
      img.data[o + 2] = B;
      img.data[o + 3] = 255;
    }
  }
  canvas.getContext('2d')!.putImageData(img, 0, 0);
}
