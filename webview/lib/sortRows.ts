/**
 * The order of a sortable table's rows (lib/sortTable.ts draws it): by one column, ascending or
 * descending, and the next order a click on a column's header gives. Pure, for node tests.
 */
export interface SortOrder<K extends string = string> {
  key: K;
  descending: boolean;
}

type Cell = string | number | null;

/** The rows sorted by one column (a stable sort; strings by locale, nulls last either way). */
export function sortRows<R, K extends keyof R & string>(rows: readonly R[], o: SortOrder<K>): R[] {
  const sign = o.descending ? -1 : 1;
  const cmp = (a: R, b: R): number => {
    const x = a[o.key] as Cell;
    const y = b[o.key] as Cell;
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sign * (typeof x === 'string' ? x.localeCompare(y as string) : x - (y as number));
  };
  return [...rows].sort(cmp);
}

/** A click on a column's header: that column ascending, or the same column reversed. */
export function nextOrder<K extends string>(o: SortOrder<K>, key: K): SortOrder<K> {
  return o.key === key ? { key, descending: !o.descending } : { key, descending: false };
}
