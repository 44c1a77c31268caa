/**
 * One sentence's beam search tree as an SVG, drawn left to right by step (positions from
 * beamLayout.ts): every hypothesis the search looked at is a node; the chosen path is highlighted,
 * greedy's path dashed, pruned branches greyed, finished hypotheses square; hover shows a node's
 * log-prob and score. With it the n-best table, the summary line and the legend. The Beam Tree panel
 * (webview/beam/page.ts) and the run report (webview/report/beam.ts) both draw a tree with these.
 */
import type { BeamTreeView, BeamViewNode } from '../../src/protocol/beamTree';
import { h, readTheme, type Theme } from '../common';
import { layoutTree, pathOf } from './beamLayout';

const SVG = 'http://www.w3.org/2000/svg';
const COL_W = 92; // px per step
const ROW_H = 22; // px per leaf row
/** Room around the tree, px. */
export const TREE_PAD = 16;
/** Room right of the last column for a leaf's label. */
export const LABEL_W = 80;

/** The nodes on the chosen path and on greedy's path (as far as it stayed in the beam). */
export interface BeamMarks {
  chosen: Set<number>;
  greedy: Set<number>;
}

export function beamMarks(tree: BeamTreeView | null): BeamMarks {
  return {
    chosen: new Set(tree ? tree.nodes.filter((n) => n.chosen).map((n) => n.id) : []),
    greedy: new Set(tree ? pathOf(tree.nodes, tree.greedy) : []),
  };
}

/** A log-prob or score as shown: −1e30 (the wire's −∞) as −∞. */
export const fmtScore = (x: number): string => (x <= -1e29 ? '−∞' : x.toFixed(3));

/** A path's tokens from the root to node `id`, as text. */
export function prefixText(tree: BeamTreeView, id: number): string {
  const words: string[] = [];
  for (let n = tree.nodes[id]!; n.parent >= 0; n = tree.nodes[n.parent]!) words.unshift(n.text);
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

export interface TreeDrawing {
  /** Where node `id` is drawn in the SVG, px. */
  at(id: number): { x: number; y: number };
}

/** What a page adds to the plain drawing: the node it shows ringed, and a click on a node. */
export interface TreeDrawOptions {
  selected?: number;
  onNode?: (id: number) => void;
}

/** Draws `tree` into `svg` (emptied first): an edge per node but the root, a mark and label per node. */
export function drawBeamTree(
  svg: SVGSVGElement,
  tree: BeamTreeView,
  marks: BeamMarks,
  o: TreeDrawOptions = {},
): TreeDrawing {
  svg.replaceChildren();
  const t = readTheme();
  const { row, col, rows, cols } = layoutTree(tree.nodes);
  const x = (id: number) => TREE_PAD + col[id]! * COL_W;
  const y = (id: number) => TREE_PAD + row[id]! * ROW_H;
  svg.setAttribute('width', String(TREE_PAD * 2 + Math.max(0, cols - 1) * COL_W + LABEL_W));
  svg.setAttribute('height', String(TREE_PAD * 2 + Math.max(0, rows - 1) * ROW_H));
  svg.setAttribute('font-family', t.font);
  svg.setAttribute('font-size', String(t.fontSize - 2));
  const { chosen, greedy } = marks;
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
    dots.append(nodeMark(tree, n, { x: x(n.id), y: y(n.id) }, faded, t, marks, o));
  }
  svg.append(edges, dots);
  return { at: (id) => ({ x: x(id), y: y(id) }) };
}

function nodeMark(
  tree: BeamTreeView,
  n: BeamViewNode,
  { x: cx, y: cy }: { x: number; y: number },
  faded: boolean,
  t: Theme,
  { chosen, greedy }: BeamMarks,
  o: TreeDrawOptions,
): SVGGElement {
  const g = svgEl('g', { class: 'beam-node', opacity: faded ? 0.4 : 1 });
  g.dataset.node = String(n.id);
  g.dataset.status = n.status;
  const fill = chosen.has(n.id) ? t.accent : greedy.has(n.id) ? t.accent2 : faded ? t.muted : t.fg;
  const mark =
    n.status === 'finished'
      ? svgEl('rect', { x: cx - 5, y: cy - 5, width: 10, height: 10, fill })
      : svgEl('circle', { cx, cy, r: 4.5, fill });
  if (o.selected === n.id) {
    mark.setAttribute('stroke', t.accent3);
    mark.setAttribute('stroke-width', '3');
  }
  const label = svgEl('text', { x: cx + 8, y: cy - 6, fill: faded ? t.muted : t.fg });
  label.textContent = n.text; // textContent: a token such as <s> stays text
  const title = svgEl('title', {});
  title.textContent =
    `${prefixText(tree, n.id) || '(start)'}\nlog P ${fmtScore(n.logProb)} · score ${fmtScore(n.score)} · ${n.status}` +
    `${chosen.has(n.id) ? ' · chosen' : ''}${greedy.has(n.id) ? ' · greedy' : ''}`;
  g.append(title, mark, label);
  const onNode = o.onNode;
  if (onNode)
    g.addEventListener('click', () => {
      if (n.parent >= 0) onNode(n.id);
    });
  return g;
}

/** The n-best list, best first, into `table` (emptied first): rank, hypothesis, score, log P. */
export function drawNBest(table: HTMLTableElement, tree: BeamTreeView, onRow?: (id: number) => void): void {
  table.replaceChildren(
    h('tr', {}, h('th', {}, '#'), h('th', {}, 'hypothesis'), h('th', {}, 'score'), h('th', {}, 'log P')),
  );
  tree.nBest.forEach((id, rank) => {
    const n = tree.nodes[id]!;
    const tr = h('tr', { class: 'problem' }, h('td', {}, String(rank + 1)), h('td', {}, prefixText(tree, id)));
    tr.append(h('td', {}, fmtScore(n.score)), h('td', {}, fmtScore(n.logProb)));
    if (onRow) {
      tr.title = 'Click to see the attention that chose its last token';
      tr.addEventListener('click', () => onRow(id));
    }
    table.append(tr);
  });
}

/** The tree in a line: how many hypotheses, the chosen one's words, and where greedy went. */
export function beamSummary(tree: BeamTreeView, { chosen }: BeamMarks): string {
  const best = tree.nBest[0];
  const path = pathOf(tree.nodes, tree.greedy);
  const whole = path.length === tree.greedy.length;
  const same = whole && path.every((id) => chosen.has(id));
  const words = tree.greedy.map((_, i) => tree.nodes[path[i] ?? -1]?.text ?? '…').join(' ');
  return (
    `${tree.nodes.length} hypotheses · chosen: “${best !== undefined ? prefixText(tree, best) : '(none)'}” · ` +
    `greedy: ${same ? 'the same' : whole ? `“${words}” (dashed)` : 'left the beam (drawn as far as it stayed)'}`
  );
}

/** The search's settings, as the header's note says them. */
export const beamSettings = (tree: BeamTreeView): string =>
  `beam ${tree.beam}, α ${tree.alpha}, ${tree.earlyStop} stop`;

/** What the marks mean, in the theme's colours. */
export function beamLegend(): HTMLElement {
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
