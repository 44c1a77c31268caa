/**
 * The Beam Tree panel: one sentence's beam search, drawn left to right by step. Every hypothesis
 * the search looked at is a node; the chosen path is highlighted, greedy's path dashed, pruned
 * branches greyed, finished hypotheses square. Hover shows a node's log-prob and score; a click
 * asks the extension for its prefix's attention, drawn beside the tree as heads × keys rows (the
 * query that chose the node's token), with the n-best list. The tree, the n-best and the legend are
 * drawn by lib/beamTree.ts, as the run report draws them.
 */
import { type Attention, type AttentionKind, headId } from '../../src/protocol/attention';
import type { BeamTreeView } from '../../src/protocol/beamTree';
import { type BeamToPage, beamPage } from '../../src/protocol/pages/beam';
import type { ViewHeader } from '../../src/protocol/webview';
import { app, h, imageButton, readTheme, renderHeader, shownHeader, start, watchTheme, poster } from '../common';
import { drawHeatmap } from '../heatmap';
import { setKeyLabels } from '../keyLabels';
import {
  type BeamMarks,
  LABEL_W,
  TREE_PAD,
  beamLegend,
  beamMarks,
  beamSettings,
  beamSummary,
  drawBeamTree,
  drawNBest,
  prefixText,
} from '../lib/beamTree';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(beamPage);

const SVG = 'http://www.w3.org/2000/svg';
/** The kinds a node's attention shows: what the decoder looked at when it chose the token. */
const NODE_KINDS: AttentionKind[] = ['cross', 'decoder_self'];

let tree: BeamTreeView | null = null;
let node: { id: number; attention: Attention } | null = null;
let header: ViewHeader | null = null;
let marks: BeamMarks = beamMarks(null);

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('span', { class: 'muted', id: 'status' }, 'No tree yet: run “Show Beam Tree” on a sentence.');
const svg = document.createElementNS(SVG, 'svg');
svg.id = 'beam-tree';
const treeBox = h('div', { class: 'beam-tree' });
treeBox.append(svg);
const nBestEl = h('table', { id: 'n-best' });
const nodeEl = h('div', { id: 'beam-node' }, h('span', { class: 'muted' }, 'Click a node to see its attention.'));

const showNode = (id: number) => ask({ type: 'beamNode', node: id });

function drawTree(): void {
  svg.replaceChildren();
  if (!tree) return;
  const drawn = drawBeamTree(svg, tree, marks, { ...(node ? { selected: node.id } : {}), onNode: showNode });
  // A new tree opens on its chosen leaf (the end of the best hypothesis); a redraw keeps the user's scroll.
  const key = `${tree.runDir} ${tree.step} ${tree.input} ${tree.nodes.length}`;
  const leaf = tree.nBest[0];
  if (key !== scrolledTo && leaf !== undefined) showInBox(drawn.at(leaf).x, drawn.at(leaf).y);
  scrolledTo = key;
}

/** The tree whose chosen leaf the box was last scrolled to. */
let scrolledTo = '';
/** Scrolls the tree's box so the point (cx, cy), a node with its label, lies inside it. */
function showInBox(cx: number, cy: number): void {
  const box = treeBox;
  const right = cx + LABEL_W;
  if (right > box.scrollLeft + box.clientWidth) box.scrollLeft = right - box.clientWidth;
  if (cx - TREE_PAD < box.scrollLeft) box.scrollLeft = Math.max(0, cx - TREE_PAD);
  if (cy + TREE_PAD > box.scrollTop + box.clientHeight) box.scrollTop = cy + TREE_PAD - box.clientHeight;
  if (cy - TREE_PAD < box.scrollTop) box.scrollTop = Math.max(0, cy - TREE_PAD);
}

function drawNBestTable(): void {
  nBestEl.replaceChildren();
  if (tree) drawNBest(nBestEl, tree, showNode);
}

/** For each kind, heads × keys: the last query row of every layer's heads (the step that chose the node's token). */
function drawNode(): void {
  if (!tree || !node) {
    nodeEl.replaceChildren(h('span', { class: 'muted' }, 'Click a node to see its attention.'));
    return;
  }
  const a = node.attention;
  const parts: HTMLElement[] = [
    h('div', {}, `“${prefixText(tree, node.id)}”: the query that chose “${tree.nodes[node.id]!.text}”`),
  ];
  const labels: (() => void)[] = []; // measured once attached, in the font they are drawn in
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
    labels.push(() => setKeyLabels(keyLabels, keys, cell));
    parts.push(
      h('h2', {}, kind === 'cross' ? 'Cross-attention (source keys)' : 'Decoder self-attention (earlier target keys)'),
      h('div', { class: 'labelled-map' }, rowLabels, canvas, h('span'), keyLabels),
    );
  }
  nodeEl.replaceChildren(...parts);
  for (const label of labels) label();
}

function draw(): void {
  const note = tree ? beamSettings(tree) : undefined;
  renderHeader(headerEl, header, {
    ...(tree ? { step: tree.step, input: tree.input } : {}),
    ...(note ? { note } : {}),
  });
  marks = beamMarks(tree);
  if (tree) status.textContent = beamSummary(tree, marks);
  drawTree();
  drawNBestTable();
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
    h('section', { class: 'card tree-card' }, beamLegend(), treeBox),
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
        `chosen:${[...marks.chosen].sort((a, b) => a - b).join(',')}`,
        `greedy:${[...marks.greedy].sort((a, b) => a - b).join(',')}`,
        `pruned:${tree.nodes.filter((n) => n.status === 'pruned').length}`,
        `nbest:${nBestEl.querySelectorAll('tr').length - 1}`,
        ...(node ? [`node:${node.id}`] : []),
      ]
    : [],
  colors: [],
}));
