/**
 * The Head Importance table's rows from a heads report (protocol/heads.ts): each head by its one
 * name (`cross:1.0`), its importance I_h, its rank (1 = the most important) and the metric once it
 * is removed with every less important head before it (the by-importance pruning curve); their
 * order when a column is sorted, and the table as CSV and JSON.
 */
import { csvLine } from '../../src/protocol/export';
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
export interface SortOrder {
  key: SortKey;
  descending: boolean;
}

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

/** The rows sorted by one column (a stable sort; heads by name, nulls last). */
export function sortRows(rows: readonly ImportanceRow[], o: SortOrder): ImportanceRow[] {
  const sign = o.descending ? -1 : 1;
  const cmp = (a: ImportanceRow, b: ImportanceRow): number => {
    const x = a[o.key];
    const y = b[o.key];
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sign * (typeof x === 'string' ? x.localeCompare(y as string) : x - (y as number));
  };
  return [...rows].sort(cmp);
}

/** A click on a column's header: that column ascending, or the same column reversed. */
export function nextOrder(o: SortOrder, key: SortKey): SortOrder {
  return o.key === key ? { key, descending: !o.descending } : { key, descending: false };
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
