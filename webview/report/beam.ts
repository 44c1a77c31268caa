/**
 * The run report's beam tree (issue 33 item 1): the tree the Beam Tree panel showed of the run when
 * the report was written, drawn by lib/beamTree.ts as that panel draws it (chosen path, greedy's,
 * pruned branches, finished leaves, hover), with its summary line and n-best; no clicks (the report
 * has no engine to ask for a node's attention). A report without a tree says how to get one.
 */
import type { BeamTreeView } from '../../src/protocol/beamTree';
import { h } from '../common';
import { beamLegend, beamMarks, beamSettings, beamSummary, drawBeamTree, drawNBest } from '../lib/beamTree';

export function beamSection(tree: BeamTreeView | null): HTMLElement {
  if (!tree)
    return h(
      'p',
      { class: 'muted', id: 'beam-none' },
      'No beam tree: open one of this run in the Beam Tree panel (Show Beam Tree), then export again.',
    );
  const marks = beamMarks(tree);
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.id = 'beam-tree';
  drawBeamTree(svg, tree, marks);
  const box = h('div', { class: 'beam-tree' });
  box.append(svg);
  const nBest = h('table', { id: 'n-best' });
  drawNBest(nBest, tree, undefined);
  return h(
    'section',
    { class: 'card', id: 'beam-section' },
    h('h2', {}, `Beam tree: “${tree.input}” at step ${tree.step}`),
    h('div', { class: 'muted' }, `${beamSettings(tree)} · ${tree.checkpoint}`),
    h('div', { id: 'beam-summary' }, beamSummary(tree, marks)),
    beamLegend(),
    box,
    h('h2', {}, 'n-best'),
    nBest,
  );
}
