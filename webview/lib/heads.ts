/**
 * The Heads panel's table: one statistic of every head over the telemetry rows, as rows (heads)
 * by columns (steps), sorted and filtered. Pure, so unit tests run it without a browser.
 */
import type { TelemetryRow } from '../../src/protocol/telemetry';

export interface HeadsView {
  /** `kind:layer.head`, in display order. */
  heads: string[];
  /** The telemetry steps, ascending: one column each. */
  steps: number[];
  /** values[row][col]: null where the row has no value for that head. */
  values: (number | null)[][];
  /** Range of the finite values (0 and 0 when there are none). */
  min: number;
  max: number;
}

export type HeadsOrder = 'name' | 'latest' | 'mean';

/** One statistic of every head that any row names, heads in first-seen order. */
export function headColumns(rows: readonly TelemetryRow[], stat: string): HeadsView {
  const sorted = [...rows].sort((a, b) => a.step - b.step);
  const heads: string[] = [];
  const seen = new Set<string>();
  for (const r of sorted)
    for (const id of r.heads)
      if (!seen.has(id)) {
        seen.add(id);
        heads.push(id);
      }
  const values = heads.map((id) =>
    sorted.map((r) => {
      const i = r.heads.indexOf(id);
      const v = i < 0 ? undefined : r.stats[stat]?.[i];
      return v === undefined || v === null || !Number.isFinite(v) ? null : v;
    }),
  );
  return withRange({ heads, steps: sorted.map((r) => r.step), values, min: 0, max: 0 });
}

/**
 * Keeps the heads of one kind (empty: all) whose id contains every word of `filter`, ordered by
 * name (kind, layer, head), by the latest value or by the mean, largest first.
 */
export function sortHeads(view: HeadsView, order: HeadsOrder, kind: string, filter: string): HeadsView {
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const keep = view.heads
    .map((id, row) => ({ id, row }))
    .filter(({ id }) => (!kind || id.startsWith(`${kind}:`)) && words.every((w) => id.toLowerCase().includes(w)));
  const key = (row: number): number => {
    const xs = view.values[row]!.filter((v): v is number => v !== null);
    if (!xs.length) return -Infinity;
    return order === 'latest' ? xs[xs.length - 1]! : xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  if (order !== 'name') keep.sort((a, b) => key(b.row) - key(a.row) || a.row - b.row);
  return withRange({
    heads: keep.map((k) => k.id),
    steps: view.steps,
    values: keep.map((k) => view.values[k.row]!),
    min: 0,
    max: 0,
  });
}

function withRange(view: HeadsView): HeadsView {
  const xs = view.values.flat().filter((v): v is number => v !== null);
  return { ...view, min: xs.length ? Math.min(...xs) : 0, max: xs.length ? Math.max(...xs) : 0 };
}
