/**
 * The Beam Tree panel: one sentence's beam search, drawn left to right by step. Every hypothesis
 * the search looked at is a node; the chosen path is highlighted, greedy's path dashed, pruned
 * branches greyed, finished hypotheses square. Hover shows a node's log-prob and score; a click
 * asks the extension for its prefix's attention, drawn beside the tree as heads × keys rows (the
 * query that chose the node's token), with the n-best list.
 */
import { type Attention, type AttentionKind, headId } from '../../src/protocol/attention';
import type { BeamTreeView, BeamViewNode } from '../../src/protocol/beamTree';
import { type BeamToPage, beamPage } from '../../src/protocol/pages/beam';
import type { ViewHeader } from '../../src/protocol/webview';
import { app, h, imageButton, readTheme, renderHeader, shownHeader, start, watchTheme, poster } from '../common';
import { drawHeatmap } from '../heatmap';
import { layoutTree, pathOf } from '../lib/beamLayout';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(beamPage);

const SVG = 'http://www.w3.org/2000/svg';
const COL_W = 92; // px per step
const ROW_H = 22; // px per leaf row
const PAD = 16;
/** Room right of the last column for a leaf's label. */
const LABEL_W = 80;
/** The kinds a node's attention shows: what the decoder looked at when it chose the token. */
const NODE_KINDS: AttentionKind[] = ['cross', 'decoder_self'];

let tree: BeamTreeView | null = null;
let node: { id: number; attention: Attention } | null = null;
let header: ViewHeader | null = null;
let chosen = new Set<number>();
let greedy = new Set<number>();

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('span', { class: 'muted', id: 'status' }, 'No tree yet: run “Show Beam Tree” on a sentence.');
const svg = document.createElementNS(SVG, 'svg');
svg.id = 'beam-tree';
const treeBox = h('div', { class: 'beam-tree' });
treeBox.append(svg);
const nBestEl = h('table', { id: 'n-best' });
const nodeEl = h('div', { id: 'beam-node' }, h('span', { class: 'muted' }, 'Click a node to see its attention.'));

const fmt = (x: number) => (x <= -1e29 ? '−∞' : x.toFixed(3));
/** A path's tokens from the root, as text. */
function prefixText(id: number): string {
  const words: string[] = [];
  for (let n = tree!.nodes[id]!; n.parent >= 0; n = tree!.nodes[n.parent]!) words.unshift(n.text);
  return words.join(' ');
}

function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function drawTree(): void {
  svg.replaceChildren();
  if (!tree) return;
  const t = readTheme();
  const { row, col, rows, cols } = layoutTree(tree.nodes);
  const x = (id: number) => PAD + col[id]! * COL_W;
  const y = (id: number) => PAD + row[id]! * ROW_H;
  svg.setAttribute('width', String(PAD * 2 + Math.max(0, cols - 1) * COL_W + LABEL_W));
  svg.setAttribute('height', String(PAD * 2 + Math.max(0, rows - 1) * ROW_H));
  svg.setAttribute('font-family', t.font);
  svg.setAttribute('font-size', String(t.fontSize - 2));
  const edges = svgEl('g', { fill: 'none' });
  const dots = svgEl('g', {});
  for (const n of tree.nodes) {
    const faded = n.status === 'pruned' || n.status === 'open';
    if (n.parent >= 0) {
      const onChosen = chosen.has(n.id);
      const e = svgEl('path', {
        d: `M${x(n.parent)},${y(n.parent)} C${x(n.parent) + COL_W / 2},${y(n.parent)} ${x(n.id) - COL_W / 2},${y(n.id)} ${x(n.id)},${y(n.id)}`,
        stroke: onChosen ? t.accent : greedy.has(n.id) ? t.accent2 : t.grid,
        'stroke-width': onChosen ? 3 : 1.5,
        opacity: faded ? 0.35 : 1,
      });
      if (greedy.has(n.id) && !onChosen) e.setAttribute('stroke-dasharray', '5 3');
      e.dataset.edge = String(n.id);
      edges.append(e);
    }
    dots.append(nodeMark(n, x(n.id), y(n.id), faded, t));
  }
  svg.append(edges, dots);
  // A new tree opens on its chosen leaf (the end of the best hypothesis); a redraw keeps the user's scroll.
  const key = `${tree.runDir} ${tree.step} ${tree.input} ${tree.nodes.length}`;
  const leaf = tree.nBest[0];
  if (key !== scrolledTo && leaf !== undefined) showInBox(x(leaf), y(leaf));
  scrolledTo = key;
}

/** The tree whose chosen leaf the box was last scrolled to. */
let scrolledTo = '';
/** Scrolls the tree's box so the point (cx, cy), a node with its label, lies inside it. */
function showInBox(cx: number, cy: number): void {
  const box = treeBox;
  const right = cx + LABEL_W;
  if (right > box.scrollLeft + box.clientWidth) box.scrollLeft = right - box.clientWidth;
  if (cx - PAD < box.scrollLeft) box.scrollLeft = Math.max(0, cx - PAD);
  if (cy + PAD > box.scrollTop + box.clientHeight) box.scrollTop = cy + PAD - box.clientHeight;
  if (cy - PAD < box.scrollTop) box.scrollTop = Math.max(0, cy - PAD);
}

function nodeMark(
  n: BeamViewNode,
  cx: number,
  cy: number,
  faded: boolean,
  t: ReturnType<typeof readTheme>,
): SVGGElement {
  const g = svgEl('g', { class: 'beam-node', opacity: faded ? 0.4 : 1 });
  g.dataset.node = String(n.id);
  g.dataset.status = n.status;
  const fill = chosen.has(n.id) ? t.accent : greedy.has(n.id) ? t.accent2 : faded ? t.muted : t.fg;
  const mark =
    n.status === 'finished'
      ? svgEl('rect', { x: cx - 5, y: cy - 5, width: 10, height: 10, fill })
      : svgEl('circle', { cx, cy, r: 4.5, fill });
  if (node?.id === n.id) {
    mark.setAttribute('stroke', t.accent3);
    mark.setAttribute('stroke-width', '3');
  }
  const label = svgEl('text', { x: cx + 8, y: cy - 6, fill: faded ? t.muted : t.fg });
  label.textContent = n.text; // textContent: a token such as <s> stays text
  const title = svgEl('title', {});
  title.textContent =
    `${prefixText(n.id) || '(start)'}\nlog P ${fmt(n.logProb)} · score ${fmt(n.score)} · ${n.status}` +
    `${chosen.has(n.id) ? ' · chosen' : ''}${greedy.has(n.id) ? ' · greedy' : ''}`;
  g.append(title, mark, label);
  g.addEventListener('click', () => {
    if (n.parent < 0) return;
    ask({ type: 'beamNode', node: n.id });
  });
  return g;
}

function drawNBest(): void {
  nBestEl.replaceChildren();
  if (!tree) return;
  nBestEl.append(h('tr', {}, h('th', {}, '#'), h('th', {}, 'hypothesis'), h('th', {}, 'score'), h('th', {}, 'log P')));
  tree.nBest.forEach((id, rank) => {
    const n = tree!.nodes[id]!;
    const tr = h('tr', { class: 'problem' }, h('td', {}, String(rank + 1)), h('td', {}, prefixText(id)));
    tr.append(h('td', {}, fmt(n.score)), h('td', {}, fmt(n.logProb)));
    tr.title = 'Click to see the attention that chose its last token';
    tr.addEventListener('click', () => ask({ type: 'beamNode', node: id }));
    nBestEl.append(tr);
  });
}

/** For each kind, heads × keys: the last query row of every layer's heads (the step that chose the node's token). */
function drawNode(): void {
  if (!tree || !node) {
    nodeEl.replaceChildren(h('span', { class: 'muted' }, 'Click a node to see its attention.'));
    return;
  }
  const a = node.attention;
  const parts: HTMLElement[] = [
    h('div', {}, `“${prefixText(node.id)}”: the query that chose “${tree.nodes[node.id]!.text}”`),
  ];
  for (const kind of NODE_KINDS) {
    const m = a.maps.find((x) => x.kind === kind);
    if (!m) continue;
    const [L, H, T, S] = m.shape;
    const rows = new Float32Array(L * H * S); // [L·H, S]
    for (let l = 0; l < L; l++)
      for (let hh = 0; hh < H; hh++)
        rows.set(m.weights.subarray(((l * H + hh) * T + (T - 1)) * S, ((l * H + hh) * T + T) * S), (l * H + hh) * S);
    const canvas = h('canvas', { class: 'heatmap', 'data-kind': kind });
    const cell = Math.max(4, Math.min(18, Math.floor(360 / Math.max(S, 1))));
    drawHeatmap(canvas, rows, L * H, S, S, L * H, 1);
    canvas.style.width = `${S * cell}px`;
    canvas.style.height = `${L * H * cell}px`;
    const keys = kind === 'cross' ? a.srcTokens : a.tgtTokens;
    const rowLabels = h('div', { class: 'query-labels' });
    for (let l = 0; l < L; l++)
      for (let hh = 0; hh < H; hh++)
        rowLabels.append(
          h('span', { style: `height:${cell}px;line-height:${cell}px` }, headId({ kind, layer: l, head: hh })),
        );
    const keyLabels = h('div', { class: 'key-labels' });
    for (const k of keys) keyLabels.append(h('span', { style: `width:${cell}px` }, k));
    parts.push(
      h('h2', {}, kind === 'cross' ? 'Cross-attention (source keys)' : 'Decoder self-attention (earlier target keys)'),
      h('div', { class: 'labelled-map' }, rowLabels, canvas, h('span'), keyLabels),
    );
  }
  nodeEl.replaceChildren(...parts);
}

function draw(): void {
  const note = tree ? `beam ${tree.beam}, α ${tree.alpha}, ${tree.earlyStop} stop` : undefined;
  renderHeader(headerEl, header, {
    ...(tree ? { step: tree.step, input: tree.input } : {}),
    ...(note ? { note } : {}),
  });
  chosen = new Set(tree ? tree.nodes.filter((n) => n.chosen).map((n) => n.id) : []);
  greedy = new Set(tree ? pathOf(tree.nodes, tree.greedy) : []);
  if (tree) {
    const best = tree.nBest[0];
    const path = pathOf(tree.nodes, tree.greedy);
    const whole = path.length === tree.greedy.length;
    const same = whole && path.every((id) => chosen.has(id));
    const words = tree.greedy.map((_, i) => tree!.nodes[path[i] ?? -1]?.text ?? '…').join(' ');
    status.textContent =
      `${tree.nodes.length} hypotheses · chosen: “${best !== undefined ? prefixText(best) : '(none)'}” · ` +
      `greedy: ${same ? 'the same' : whole ? `“${words}” (dashed)` : 'left the beam (drawn as far as it stayed)'}`;
  }
  drawTree();
  drawNBest();
  drawNode();
}

/** The tree as an image: the SVG as drawn, on the theme's background. */
async function treeImage(format: 'png' | 'svg'): Promise<{ dataUrl: string; name: string } | string> {
  if (!tree) return 'no tree is shown yet';
  const copy = svg.cloneNode(true) as SVGSVGElement;
  copy.setAttribute('xmlns', SVG);
  copy.setAttribute('style', `background:${readTheme().bg}`);
  const text = new XMLSerializer().serializeToString(copy);
  const svgUrl = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  if (format === 'svg') return { dataUrl: svgUrl, name: 'beam-tree.svg' };
  const img = new Image();
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('the tree image did not load'));
    img.src = svgUrl;
  });
  const c = h('canvas', { width: String(img.width), height: String(img.height) });
  const ctx = c.getContext('2d')!;
  ctx.fillStyle = readTheme().bg;
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(img, 0, 0);
  return { dataUrl: c.toDataURL('image/png'), name: 'beam-tree.png' };
}

function handle(m: BeamToPage): void {
  tree = m.state.tree;
  node = m.state.node;
  header = m.state.header;
  draw();
}

/** What the marks mean, in the theme's colours. */
function legend(): HTMLElement {
  const t = readTheme();
  const key = (color: string, sample: string, text: string) =>
    h('span', {}, h('span', { style: `color:${color}` }, sample), ` ${text}`);
  return h(
    'div',
    { class: 'legend' },
    key(t.accent, '━', 'chosen'),
    key(t.accent2, '┅', 'greedy'),
    key(t.fg, '■', 'finished'),
    key(t.fg, '●', 'hypothesis'),
    h('span', {}, 'faded: pruned, or left when the search stopped'),
  );
}

app().append(
  h(
    'div',
    { class: 'toolbar' },
    status,
    h('span', { class: 'spacer' }),
    imageButton('png', treeImage),
    imageButton('svg', treeImage),
    imageButton('html'),
  ),
  h(
    'div',
    { class: 'beam-layout' },
    h('section', { class: 'card tree-card' }, legend(), treeBox),
    h('section', { class: 'card detail-card' }, h('h2', {}, 'n-best'), nBestEl, h('hr'), nodeEl),
  ),
);
watchTheme(draw);
start(beamPage, handle, treeImage, () => ({
  ...shownHeader(headerEl),
  maps: node
    ? NODE_KINDS.flatMap((k) => node!.attention.maps.filter((m) => m.kind === k)).map((m) => ({
        kind: m.kind,
        shape: m.shape,
      }))
    : [],
  head: null,
  frames: tree ? tree.nodes.length : 0,
  marks: tree
    ? [
        `chosen:${[...chosen].sort((a, b) => a - b).join(',')}`,
        `greedy:${[...greedy].sort((a, b) => a - b).join(',')}`,
        `pruned:${tree.nodes.filter((n) => n.status === 'pruned').length}`,
        `nbest:${nBestEl.querySelectorAll('tr').length - 1}`,
        ...(node ? [`node:${node.id}`] : []),
      ]
    : [],
  colors: [],
}));
