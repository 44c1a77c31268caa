/**
 * The attention view's grids: for each kind a card of layers × heads thumbnails with its token lines
 * and across-heads row, then the head view. Kept from one snapshot to the next (issue 34): a snapshot
 * of the shape already shown (same run, input, tokens, kinds, shapes and thumbnail size) puts new
 * pixels into the canvases of the maps whose values changed and nothing else: no element made, no
 * listener attached (those on the grid are delegated, attached once), no canvas resized. The cards
 * are built anew only when that shape changes. Thumbnails are drawn those on screen first, in slices
 * of a few milliseconds so a 512-token message never freezes the page; the across-heads rows and
 * the head view when on screen (lazyParts.ts).
 */
import {
  ATTENTION_KINDS,
  type Attention,
  type AttentionKind,
  findMaps,
  headId,
  headMap,
  type HeadRef,
  KIND_AXES,
  tokensOf,
} from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { h } from '../common';
import { cellAt, drawHeatmap, fitSize, sameValues } from '../heatmap';
import { type AggregateRow, aggregateRow } from './aggregate';
import { showCrosshair, tokenLine, watchTokens } from './crosshair';
import { kindCaption } from './zoom';
import { showHeadView } from './headView';
import { KIND_TITLES, sameHead } from './attentionNames';
import { dropPart, drawVisible, onScreen } from './lazyParts';

/** The Scheduler API's part used here (Chromium 94+: VS Code's webviews, the test browser). */
type Scheduler = { postTask(task: () => void, options: { priority: 'user-visible' }): Promise<void> };

/**
 * Runs `task` as a task of its own, after what is queued. Not setTimeout(0): HTML clamps nested
 * timers to 4 ms from the fifth on, so a 512-token grid's dozen slices waited ~30 ms for nothing.
 * scheduler.postTask has no clamp; setTimeout where it is missing. A task's error is thrown again as
 * an uncaught error, which the page shows (common.ts), not left as a rejected promise.
 */
function nextTask(task: () => void): void {
  const scheduler = (globalThis as { scheduler?: Scheduler }).scheduler;
  if (!scheduler) return void setTimeout(task, 0);
  scheduler.postTask(task, { priority: 'user-visible' }).catch((err: unknown) =>
    setTimeout(() => {
      throw err;
    }, 0),
  );
}

const THUMB = 96;
const MIN_THUMB = 40;

interface Thumb {
  canvas: HTMLCanvasElement;
  ref: HeadRef;
  role: HTMLElement;
  /** Not yet drawn from the attention shown (new, changed, or a newer snapshot came first). */
  pending: boolean;
}

/** What the grid shows, and what it is built for. */
let shown: Attention | null = null;
let layoutKey = '';
/** The scale the thumbnails were drawn on: `absolute:top`. */
let scale: string | null = null;
/** The weights the across-heads rows were last computed from. */
let shownWeights: Attention | null = null;
let thumbs: Thumb[] = [];
let rows = new Map<AttentionKind, AggregateRow>();
let generation = 0;

/** Per kind, [layer][head]: whether `next`'s map differs from `prev`'s (every one when there is none to compare). */
export function changedHeads(prev: Attention | null, next: Attention): Map<AttentionKind, boolean[][]> {
  const out = new Map<AttentionKind, boolean[][]>();
  for (const m of next.maps) {
    const [layers, heads, q, k] = m.shape;
    const was = prev && findMaps(prev, m.kind);
    const comparable = !!was && was.shape.every((n, i) => n === m.shape[i]);
    out.set(
      m.kind,
      Array.from({ length: layers }, (_, l) =>
        Array.from({ length: heads }, (_, hd) => {
          const o = (l * heads + hd) * q * k;
          return !comparable || !sameValues(was.weights.subarray(o, o + q * k), m.weights.subarray(o, o + q * k));
        }),
      ),
    );
  }
  return out;
}

/** Thumbnail side for `heads` heads across `width` pixels: up to THUMB, smaller when they would not fit. */
function sideOf(width: number, heads: number): number {
  return Math.max(MIN_THUMB, Math.min(THUMB, Math.floor((width - 72) / heads) - 4));
}

function keyOf(width: number, p: Attention): string {
  const kinds = p.maps.map((m) => [m.kind, m.shape, m.pool ?? null, sideOf(width, m.shape[1])]);
  return JSON.stringify([p.source.runDir, p.source.input, p.srcTokens, p.tgtTokens, kinds]);
}

/** A thumbnail's tooltip: its head, kind and roles at this step. */
const titleOf = (ref: HeadRef, named: string[]) =>
  `${headId(ref)} · ${KIND_TITLES[ref.kind]}${named.length ? ` · ${named.join(', ')}` : ''}`;

/**
 * Delegated once on `grids`: a click on a thumbnail opens its head; moving over one reads out the
 * cell and marks its row and column on every map of its kind; hovering a token marks it likewise.
 */
export function watchGrid(grids: HTMLElement, open: (ref: HeadRef) => void, readout: (text: string) => void): void {
  const thumbOf = (e: Event) =>
    e.target instanceof HTMLCanvasElement && e.target.classList.contains('thumb') ? e.target : null;
  const refOf = (c: HTMLCanvasElement): HeadRef => ({
    kind: c.dataset.kind as AttentionKind,
    layer: Number(c.dataset.layer),
    head: Number(c.dataset.head),
  });
  grids.addEventListener('click', (e) => {
    const c = thumbOf(e);
    if (c) open(refOf(c));
  });
  grids.addEventListener('mousemove', (e) => {
    const canvas = thumbOf(e);
    const ref = canvas && refOf(canvas);
    const map = ref && shown && headMap(shown, ref);
    if (!canvas || !ref || !map) return;
    const c = cellAt(canvas, e, map.queries, map.keys);
    if (!c) return;
    readout(
      `${headId(ref)}: query ${c.row} “${map.queryTokens[c.row]}” → key ${c.col} “${map.keyTokens[c.col]}” = ` +
        map.weights[c.row * map.keys + c.col]!.toFixed(4),
    );
    showCrosshair(grids, ref.kind, { row: c.row, col: c.col });
  });
  grids.addEventListener('mouseout', (e) => {
    if (thumbOf(e)) showCrosshair(grids, null, { row: null, col: null });
  });
  watchTokens(grids);
}

/** Empties the grid (no attention to show). */
export function clearGrid(grids: HTMLElement): void {
  generation++;
  grids.replaceChildren();
  for (const row of rows.values()) row.els.forEach(dropPart);
  rows = new Map();
  thumbs = [];
  shown = null;
  layoutKey = '';
}

/** The cards of `p`, built anew: their canvases sized, nothing drawn yet. */
function build(grids: HTMLElement, width: number, p: Attention, roles: Map<string, string[]>, absolute: boolean) {
  clearGrid(grids);
  for (const kind of ATTENTION_KINDS) {
    const maps = findMaps(p, kind);
    if (!maps) continue;
    const [layers, heads, queries, keys] = maps.shape;
    const { queryTokens, keyTokens } = tokensOf(p, kind);
    const size = fitSize(queries, keys, sideOf(width, heads));
    const table = h('div', {
      class: 'thumb-grid',
      style: `grid-template-columns: auto repeat(${heads}, ${size.width}px)`,
    });
    table.append(h('span', {}));
    for (let hd = 0; hd < heads; hd++) table.append(h('span', { class: 'col-label' }, `H${hd}`));
    for (let l = 0; l < layers; l++) {
      table.append(h('span', { class: 'row-label' }, `L${l}`));
      for (let hd = 0; hd < heads; hd++) {
        const ref: HeadRef = { kind, layer: l, head: hd };
        const named = roles.get(headId(ref)) ?? [];
        const canvas = h('canvas', {
          class: 'thumb',
          width: String(size.width),
          height: String(size.height),
          title: titleOf(ref, named),
          'data-kind': kind,
          'data-layer': String(l),
          'data-head': String(hd),
          'data-queries': String(queries),
          'data-keys': String(keys),
          style: `width:${size.width}px;height:${size.height}px`,
        });
        const role = h('div', { class: 'role-label', style: `width:${size.width}px` }, named.join(' · '));
        table.append(h('div', { class: 'thumb-cell' }, canvas, role));
        thumbs.push({ canvas, ref, role, pending: true });
      }
    }
    const row = aggregateRow(p, kind, size, absolute);
    if (row) rows.set(kind, row);
    const axes = KIND_AXES[kind];
    grids.append(
      h(
        'section',
        { class: 'card kind', 'data-kind': kind },
        h(
          'header',
          {},
          h('h2', {}, KIND_TITLES[kind]),
          h('span', { class: 'muted' }, kindCaption(maps, queryTokens.length, keyTokens.length)),
        ),
        tokenLine('queries', axes.queries, queryTokens),
        tokenLine('keys', axes.keys, keyTokens),
        table,
        ...(row?.els ?? []),
      ),
    );
  }
}

/** How the grid draws: the scale, and (value-weighted) the weights the across-heads rows average and the head view. */
export interface GridOptions {
  header: ViewHeader | null;
  roles: Map<string, string[]>;
  selected: HeadRef | null;
  /** One scale for every map, 0 to `vmax` (default 1), instead of 0 to each map's largest. */
  absolute: boolean;
  vmax?: number;
  /** The weights, when `p` holds something else (value-weighted norms): the across-heads rows average these. */
  weights?: Attention;
  /** What the head view draws instead of `p` (values 0 to 1) and the note its caption adds. */
  headView?: { a: Attention; note: string };
}

/**
 * Shows `p`: builds the cards when their shape changed, else updates them in place (roles, the
 * selected head, the maps that changed); draws the thumbnails a slice at a time, those on screen
 * first; then the across-heads rows and the head view on screen; then calls `done`.
 */
export function showGrid(grids: HTMLElement, p: Attention, o: GridOptions, done: () => void): void {
  const width = grids.clientWidth; // one layout, read before the cards are built (each would force another)
  const key = keyOf(width, p);
  const rebuilt = key !== layoutKey;
  const weights = o.weights ?? p;
  if (rebuilt) build(grids, width, weights, o.roles, o.absolute);
  const changes = changedHeads(rebuilt ? null : shown, p);
  const vmax = o.absolute ? (o.vmax ?? 1) : undefined;
  const rescaled = scale !== `${o.absolute}:${vmax}`;
  shown = p;
  scale = `${o.absolute}:${vmax}`;
  layoutKey = key;
  for (const t of thumbs) {
    t.pending ||= rescaled || !!changes.get(t.ref.kind)?.[t.ref.layer]?.[t.ref.head];
    const named = o.roles.get(headId(t.ref)) ?? [];
    const title = titleOf(t.ref, named);
    if (t.canvas.title !== title) t.canvas.title = title;
    if (t.role.textContent !== named.join(' · ')) t.role.textContent = named.join(' · ');
    t.canvas.classList.toggle('selected', sameHead(o.selected, t.ref));
  }
  const weightChanges = o.weights ? changedHeads(rebuilt ? null : shownWeights, o.weights) : changes;
  shownWeights = weights;
  for (const [kind, row] of rows)
    row.update(
      weights,
      (weightChanges.get(kind) ?? []).map((heads) => heads.some(Boolean)),
      o.absolute,
    );
  showHeadView(grids, o.headView?.a ?? p, o.header, o.headView?.note);
  const jobs = thumbs.filter((t) => t.pending);
  const first = jobs.filter((t) => onScreen(t.canvas));
  const queue = [...first, ...jobs.filter((t) => !first.includes(t))];
  const gen = ++generation;
  let drawn = thumbs.length - queue.length;
  const slice = () => {
    if (gen !== generation) return; // a newer message replaced this one; what is left stays pending
    const until = performance.now() + 12;
    while (queue.length && performance.now() < until) {
      const t = queue.shift()!;
      const map = headMap(p, t.ref)!;
      const c = t.canvas;
      drawHeatmap(c, map.weights, map.queries, map.keys, c.width, c.height, vmax);
      t.pending = false;
      c.dataset.drawn = '1';
      drawn++;
    }
    document.body.dataset.thumbsDrawn = String(drawn);
    if (queue.length) return nextTask(slice);
    drawVisible();
    done();
  };
  slice();
}
