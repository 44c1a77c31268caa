/**
 * The report's attention grid: for one snapshot (the step slider picks it among those the report
 * holds) and probe pair, each kind's layers × heads maps as canvas thumbnails drawn by the panels'
 * own heatmap (heatmap.ts: one pixel per cell, max-pooled past the canvas, viridis from 0 to each
 * map's largest weight). Hovering a thumbnail reads out the head, the query and key tokens and the
 * weight under the pointer. The head view (headView.ts) follows the step and pair it shows.
 */
import { ATTENTION_KINDS, type AttentionKind, KIND_AXES, headId } from '../../src/protocol/attention';
import { poolCaption, pooledLabels } from '../../src/algorithms/pool';
import type { ReportSnapshot, RunReportData } from '../../src/protocol/report';
import { h } from '../common';
import { cellAt, drawColorBar, drawHeatmap, fitSize } from '../heatmap';
import { counted } from '../lib/counted';

const THUMB = 96;
const KIND_TITLES: Record<AttentionKind, string> = {
  encoder_self: 'Encoder self-attention',
  decoder_self: 'Decoder self-attention (masked)',
  cross: 'Encoder–decoder (cross) attention',
};

/** Base64 of little-endian float32 values (protocol/report.ts) as a Float32Array. */
export function float32Of(b64: string): Float32Array {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

/** The grid with its slider; returns its section. `onShow` hears of each snapshot and pair it shows. */
export function attentionSection(d: RunReportData, onShow?: (s: ReportSnapshot | undefined) => void): HTMLElement {
  const steps = [...new Set(d.snapshots.map((s) => s.step))];
  const pairs = [...new Set(d.snapshots.map((s) => s.pair))];
  const slider = h('input', {
    type: 'range',
    id: 'step-slider',
    min: '0',
    max: String(Math.max(0, steps.length - 1)),
    step: '1',
    value: String(Math.max(0, steps.length - 1)),
    'aria-label': 'snapshot step',
  });
  const label = h('span', { id: 'step-label' });
  const pairSel = h(
    'select',
    { id: 'pair', 'aria-label': 'probe pair' },
    ...pairs.map((p) => h('option', { value: String(p) }, `pair ${p}`)),
  );
  const readout = h('div', { class: 'readout', id: 'grid-readout' });
  const tokens = h('div', { class: 'muted', id: 'grid-tokens' });
  const grids = h('div', { id: 'grids' });
  const bar = h('canvas', { width: '120', height: '10', style: 'width:120px;height:10px' });
  drawColorBar(bar);
  const draw = (): void => {
    const step = steps[Number(slider.value)];
    const snap = d.snapshots.find((s) => s.step === step && String(s.pair) === pairSel.value);
    label.textContent = step === undefined ? 'no snapshots' : `step ${step}`;
    label.dataset.step = step === undefined ? '' : String(step);
    document.body.dataset.gridStep = label.dataset.step;
    grids.replaceChildren(...(snap ? kindCards(snap, readout) : []));
    tokens.textContent = snap ? `source: ${snap.srcTokens.join(' ')} · target: ${snap.tgtTokens.join(' ')}` : '';
    onShow?.(snap);
  };
  slider.addEventListener('input', draw);
  pairSel.addEventListener('change', draw);
  draw();
  const held =
    d.snapshots.length === 0
      ? 'The run has no attention snapshots.'
      : `${steps.length} of the run's ${counted(d.snapshotSteps.length, 'snapshot')} (steps ${steps[0]}–${steps.at(-1)}); each map coloured from 0 to its largest weight.`;
  return h(
    'section',
    { class: 'card', id: 'attention' },
    h('h2', {}, 'Attention at a snapshot'),
    h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'step '),
      slider,
      label,
      pairs.length > 1 ? pairSel : '',
      h('span', { class: 'muted' }, '0'),
      bar,
      h('span', { class: 'muted' }, 'max'),
    ),
    h('div', { class: 'muted' }, held),
    tokens,
    readout,
    grids,
  );
}

/** One card per kind: layers down, heads across. */
function kindCards(s: ReportSnapshot, readout: HTMLElement): HTMLElement[] {
  return ATTENTION_KINDS.flatMap((kind) => {
    const m = s.maps.find((x) => x.kind === kind);
    if (!m) return [];
    const [layers, heads, q, k] = m.shape;
    const weights = float32Of(m.weights);
    const side = (which: 'src' | 'tgt') => (which === 'src' ? s.srcTokens : s.tgtTokens);
    const queries = pooledLabels(side(KIND_AXES[kind].queries), m.pool?.rows ?? 1);
    const keys = pooledLabels(side(KIND_AXES[kind].keys), m.pool?.cols ?? 1);
    const { width, height } = fitSize(q, k, THUMB);
    const grid = h('div', { class: 'thumb-grid', style: `grid-template-columns: auto repeat(${heads}, ${width}px)` });
    grid.append(
      h('span'),
      ...Array.from({ length: heads }, (_, hd) => h('span', { class: 'col-label' }, `head ${hd}`)),
    );
    for (let l = 0; l < layers; l++) {
      grid.append(h('span', { class: 'row-label' }, `layer ${l}`));
      for (let hd = 0; hd < heads; hd++) {
        const id = headId({ kind, layer: l, head: hd });
        const canvas = h('canvas', {
          class: 'thumb',
          'data-head': id,
          title: id,
          style: `width:${width}px;height:${height}px`,
        });
        const map = weights.subarray((l * heads + hd) * q * k, (l * heads + hd + 1) * q * k);
        drawHeatmap(canvas, map, q, k, width, height);
        canvas.addEventListener('mousemove', (e) => {
          const c = cellAt(canvas, e, q, k);
          if (c)
            readout.textContent = `${id} · query “${queries[c.row]}” → key “${keys[c.col]}”: ${map[c.row * k + c.col]!.toFixed(4)}`;
        });
        grid.append(canvas);
      }
    }
    const caption = poolCaption(m.pool);
    return [
      h(
        'div',
        { class: 'kind', 'data-kind': kind },
        h('h2', {}, `${KIND_TITLES[kind]}${caption ? ` · ${caption}` : ''}`),
        grid,
      ),
    ];
  });
}
