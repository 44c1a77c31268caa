/**
 * A table sortable by any column, as the report panels draw it (Head Importance, Ablation Results,
 * Run Check): a click on a column's header sorts the rows by it, another click reverses it; the
 * sorted column's header carries ▲ or ▼. Rows are plain records of strings, numbers and nulls;
 * their order is lib/sortRows.ts's.
 */
import { h } from '../common';
import { nextOrder, type SortOrder, sortRows } from './sortRows';

export interface Column<R, K extends string> {
  key: K;
  /** The header's text. */
  label: string;
  /** The cell's text. */
  cell(row: R): string;
  /** The cell's class (a Δ that hurts: `worse`). */
  cls?(row: R): string;
}

/**
 * Draws `rows` into `table` sorted by `order`, with a header row whose clicks call `onSort` with
 * the next order; `row` gives each row's attributes and, optionally, what a click on it does.
 */
export function drawSortable<R, K extends keyof R & string>(
  table: HTMLElement,
  columns: readonly Column<R, K>[],
  rows: readonly R[],
  order: SortOrder<K>,
  onSort: (o: SortOrder<K>) => void,
  row: (r: R) => { attrs?: Record<string, string>; click?: () => void } = () => ({}),
): void {
  const head = h(
    'tr',
    {},
    ...columns.map((c) => {
      const arrow = order.key === c.key ? (order.descending ? ' ▼' : ' ▲') : '';
      const th = h('th', { 'data-key': c.key, title: 'Sort by this column (again: reversed)' }, `${c.label}${arrow}`);
      th.addEventListener('click', () => onSort(nextOrder(order, c.key)));
      return th;
    }),
  );
  const body = sortRows(rows, order).map((r) => {
    const { attrs = {}, click } = row(r);
    const tr = h('tr', attrs, ...columns.map((c) => h('td', c.cls ? { class: c.cls(r) } : {}, c.cell(r))));
    if (click) tr.addEventListener('click', click);
    return tr;
  });
  table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...body));
}
