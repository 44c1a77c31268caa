/**
 * The zoom of a pooled head (inputs past 256 tokens, src/algorithms/pool.ts): the attention view's
 * thumbnails and large view show max-pooled cells; this card asks the extension for a block of
 * the head's weights (`requestBlock` → attention/block) and draws what comes back
 * (`attentionBlock`) with token axes: whole up to 256 tokens a side, else pooled and said so.
 * Opening a pooled head zooms into its top-left 256 × 256 tokens; a click on the large view zooms
 * around the clicked cell; the fields take any range.
 */
import type { BlockRange } from '../../src/protocol/attentionBlock';
import { type AttentionMaps, headId, type HeadRef, KIND_AXES } from '../../src/protocol/attention';
import { BLOCK_CELLS, poolCaption, pooledCells } from '../../src/algorithms/pool';
import { PLOTLY_CONFIG, h, plotly, plotlyText, readTheme, themedLayout, poster } from '../common';
import { plotlyColorscale } from '../lib/colormap';
import { type AttentionBlockMsg, attentionPage } from '../../src/protocol/pages/attention';
import { counted } from '../lib/counted';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const toPanel = poster(attentionPage);

/** A kind's card caption: `6 layers × 8 heads · 4096 × 4096 · pooled 32×32 → max`. */
export function kindCaption(maps: AttentionMaps, queries: number, keys: number): string {
  const [layers, heads] = maps.shape;
  const pooled = poolCaption(maps.pool);
  return `${counted(layers, 'layer')} × ${counted(heads, 'head')} · ${queries} × ${keys}${pooled ? ` · ${pooled}` : ''}`;
}

/** Axis labels of tokens [from, to) pooled by `block`: `tok ‹i›`, or `tok… ‹i–j›`. */
function axis(tokens: readonly string[], from: number, to: number, block: number): string[] {
  return Array.from({ length: pooledCells(to - from, block) }, (_, i) => {
    const a = from + i * block;
    const b = Math.min(to, a + block) - 1;
    const tok = plotlyText(tokens[a] ?? '');
    return b === a ? `${tok} ‹${a}›` : `${tok}… ‹${a}–${b}›`;
  });
}

export interface Zoom {
  el: HTMLElement;
  /** Opens a pooled head: zooms into [q0, q0 + 256) × [k0, k0 + 256). */
  open(ref: HeadRef, queries: number, keys: number, q0?: number, k0?: number): void;
  hide(): void;
  /** A block arrived: drawn when it answers the request last made (its id). */
  show(b: AttentionBlockMsg, queryTokens: readonly string[], keyTokens: readonly string[]): void;
}

export function zoomCard(): Zoom {
  const field = (id: string) => h('input', { type: 'number', min: '0', id, class: 'zoom-field', style: 'width:6em' });
  const [q0, q1, k0, k1] = ['zoom-q0', 'zoom-q1', 'zoom-k0', 'zoom-k1'].map(field) as HTMLInputElement[];
  const title = h('h2', { id: 'zoom-title' }, 'Zoom');
  const chart = h('div', { class: 'chart detail', id: 'zoom' });
  const go = h('button', { class: 'small', id: 'zoom-go' }, 'Zoom');
  const el = h(
    'section',
    { class: 'card', id: 'zoom-card', hidden: '' },
    h('header', {}, title),
    h('div', { class: 'toolbar' }, 'queries ', q0!, '–', q1!, ' keys ', k0!, '–', k1!, go),
    chart,
  );
  let head: HeadRef | null = null;
  let size = { queries: 0, keys: 0 };
  /** The id of the request last made (each request's id is new); null: none is waited for. */
  let asked: number | null = null;
  let nextId = 0;
  const ask = () => {
    if (!head) return;
    const n = (i: HTMLInputElement) => Math.max(0, Math.floor(Number(i.value)));
    const r: BlockRange = {
      ...head,
      q0: Math.min(n(q0!), size.queries - 1),
      q1: Math.min(Math.max(n(q1!), n(q0!) + 1), size.queries),
      k0: Math.min(n(k0!), size.keys - 1),
      k1: Math.min(Math.max(n(k1!), n(k0!) + 1), size.keys),
    };
    asked = ++nextId;
    title.textContent = `Zoom · queries ${r.q0}–${r.q1 - 1} × keys ${r.k0}–${r.k1 - 1} · loading…`;
    toPanel({ type: 'requestBlock', id: asked, ...r });
  };
  go.addEventListener('click', ask);
  return {
    el,
    open(ref, queries, keys, qa = 0, ka = 0) {
      head = ref;
      size = { queries, keys };
      const start = (at: number, n: number) => Math.max(0, Math.min(at, n - BLOCK_CELLS));
      const [qs, ks] = [start(qa, queries), start(ka, keys)];
      [q0!.value, q1!.value] = [String(qs), String(Math.min(queries, qs + BLOCK_CELLS))];
      [k0!.value, k1!.value] = [String(ks), String(Math.min(keys, ks + BLOCK_CELLS))];
      el.removeAttribute('hidden');
      ask();
    },
    hide() {
      head = asked = null;
      el.setAttribute('hidden', '');
    },
    show(b, queryTokens, keyTokens) {
      if (b.id !== asked) return; // a newer zoom was asked for
      const [rows, cols] = b.shape;
      const z: number[][] = [];
      for (let r = 0; r < rows; r++) z.push(Array.from(b.weights.subarray(r * cols, (r + 1) * cols)));
      const pooled = poolCaption(b.pool);
      const axes = KIND_AXES[b.kind];
      title.textContent =
        `Zoom · ${headId(b)} · queries (${axes.queries}) ${b.q0}–${b.q1 - 1} × ` +
        `keys (${axes.keys}) ${b.k0}–${b.k1 - 1} · ${pooled || 'every weight'}`;
      const t = readTheme();
      const data: Plotly.Data[] = [
        {
          type: 'heatmap',
          z,
          x: axis(keyTokens, b.k0, b.k1, b.pool.cols),
          y: axis(queryTokens, b.q0, b.q1, b.pool.rows),
          colorscale: plotlyColorscale(),
          zmin: 0,
          hovertemplate: 'query %{y}<br>key %{x}<br>weight %{z:.4f}<extra></extra>',
          colorbar: { tickfont: { color: t.fg }, outlinecolor: t.grid },
        },
      ];
      const layout = themedLayout(t, `zoom-${b.kind}-${b.layer}-${b.head}-${b.q0}-${b.k0}`, {
        xaxis: { type: 'category', title: { text: 'key' }, tickangle: -60, side: 'bottom' },
        yaxis: { type: 'category', title: { text: 'query' }, autorange: 'reversed' },
        margin: { l: 80, r: 16, t: 16, b: 80 },
      });
      void plotly(() => Plotly.react(chart, data, layout, PLOTLY_CONFIG)).then(() => {
        chart.dataset.block = `${b.kind}:${b.layer}.${b.head} ${b.q0}-${b.q1} ${b.k0}-${b.k1}`;
      });
    },
  };
}
