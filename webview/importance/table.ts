/**
 * The Head Importance table's rows from a heads report (protocol/heads.ts): each head by its one
 * name (`cross:1.0`), its importance I_h, its rank (1 = the most important) and the metric once it
 * is removed with every less important head before it (the by-importance pruning curve), and the
 * table as CSV and JSON. Their order when a column is sorted is every sortable table's (lib/sortRows.ts).
 */
import { csvLine } from '../../src/protocol/export';
import { nextOrder as nextOrderOf, type SortOrder as Order, sortRows as sortRowsBy } from '../lib/sortRows';
import type { HeadReport } from '../../src/protocol/heads';

export interface ImportanceRow {
  head: string;
  importance: number;
  /** 1 = the most important head. */
  rank: number;
  /** The metric after removing this head and every less important one (null: never removed). */
  whenRemoved: number | null;
}
export type SortKey = keyof ImportanceRow;
export type SortOrder = Order<SortKey>;
/** The rows sorted by one column (lib/sortRows.ts, for this table's rows). */
export const sortRows: (rows: readonly ImportanceRow[], o: SortOrder) => ImportanceRow[] = sortRowsBy;
/** A click on a column's header (lib/sortRows.ts, for this table's columns). */
export const nextOrder: (o: SortOrder, key: SortKey) => SortOrder = nextOrderOf;

/** One row per head, in the report's order (ascending importance). */
export function importanceRows(r: HeadReport): ImportanceRow[] {
  const ids = Object.keys(r.importance);
  const byRank = [...ids].sort((a, b) => r.importance[b]! - r.importance[a]!);
  const removed = new Map(r.byImportance.filter((p) => p.head !== null).map((p) => [p.head!, p.metric]));
  return ids.map((head) => ({
    head,
    importance: r.importance[head]!,
    rank: byRank.indexOf(head) + 1,
    whenRemoved: removed.get(head) ?? null,
  }));
}

export function importanceCsv(rows: readonly ImportanceRow[], r: HeadReport): string {
  const metric = `${r.metric}_when_removed`;
  return [
    csvLine(['head', 'importance', 'rank', metric]),
    ...rows.map((x) => csvLine([x.head, x.importance, x.rank, x.whenRemoved ?? ''])),
    '',
  ].join('\n');
}

export function importanceJson(rows: readonly ImportanceRow[], r: HeadReport): string {
  const { run, checkpoint, step, metric, sentences } = r;
  return `${JSON.stringify({ run, checkpoint, step, metric, sentences, heads: rows }, null, 2)}\n`;
}
