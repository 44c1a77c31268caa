/**
 * Where each node of a beam search tree goes, drawn left to right: x is the node's depth (tokens
 * after BOS); leaves take consecutive rows in depth-first order (children in the order the search
 * made them), and a parent sits midway between its first and last child. Pure: tested without a
 * browser.
 */
export interface TreeNodeLike {
  id: number;
  parent: number;
  depth: number;
}

export interface TreeLayout {
  /** Row of each node (fractional for parents), by id. */
  row: number[];
  /** Column (depth) of each node, by id. */
  col: number[];
  rows: number;
  cols: number;
}

export function layoutTree(nodes: readonly TreeNodeLike[]): TreeLayout {
  const children: number[][] = nodes.map(() => []);
  for (const n of nodes) if (n.parent >= 0) children[n.parent]!.push(n.id);
  const row = new Array<number>(nodes.length).fill(0);
  let next = 0;
  // Iterative post-order (trees can be hundreds of levels deep on long outputs).
  const stack: { id: number; visited: boolean }[] = nodes.length ? [{ id: 0, visited: false }] : [];
  while (stack.length) {
    const top = stack.pop()!;
    const kids = children[top.id]!;
    if (!kids.length) row[top.id] = next++;
    else if (top.visited) row[top.id] = (row[kids[0]!]! + row[kids[kids.length - 1]!]!) / 2;
    else {
      stack.push({ id: top.id, visited: true });
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ id: kids[i]!, visited: false });
    }
  }
  const col = nodes.map((n) => n.depth);
  return { row, col, rows: next, cols: col.length ? Math.max(...col) + 1 : 0 };
}

/** The ids along a token path from the root (e.g. greedy's output), as far as the tree holds it. */
export function pathOf(nodes: readonly (TreeNodeLike & { token: number })[], tokens: readonly number[]): number[] {
  const children = new Map<number, (TreeNodeLike & { token: number })[]>();
  for (const n of nodes) if (n.parent >= 0) children.set(n.parent, [...(children.get(n.parent) ?? []), n]);
  const path: number[] = [];
  let at = 0;
  for (const token of tokens) {
    const child = children.get(at)?.find((c) => c.token === token);
    if (!child) break;
    path.push(child.id);
    at = child.id;
  }
  return path;
}
