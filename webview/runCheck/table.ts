/**
 * The Run Check table's rows from a run folder's check (protocol/runCheck.ts): each finding's file,
 * line, field, message and severity as the checker gives them; the summary line; the findings as
 * Markdown. Pure: the page draws it (webview/runCheck/page.ts).
 */
import { markdownTable } from '../../src/protocol/export';
import type { RunCheck, RunCheckSeverity } from '../../src/protocol/runCheck';
import { counted } from '../lib/counted';

export interface FindingRow {
  /** 1 = the first the checker reported. */
  n: number;
  file: string;
  line: number | null;
  field: string | null;
  message: string;
  severity: RunCheckSeverity;
}
export type FindingKey = keyof FindingRow;

export function findingRows(c: RunCheck): FindingRow[] {
  return c.findings.map((f, i) => ({
    n: i + 1,
    file: f.file,
    line: f.line ?? null,
    field: f.field ?? null,
    message: f.message,
    severity: f.severity,
  }));
}

/** `reverse-micro: 12 files checked: a valid run folder` or `…: not valid, 3 findings`. */
export function summaryLine(c: RunCheck, run: string): string {
  const n = c.findings.length + c.omitted;
  const files = `${counted(c.files.length, 'file')} checked`;
  const more = c.omitted ? ` (${c.omitted} past the first ${c.findings.length} not listed)` : '';
  return `${run}: ${files}: ${c.ok ? 'a valid run folder' : `not valid, ${counted(n, 'finding')}${more}`}`;
}

export function findingsMarkdown(rows: readonly FindingRow[], c: RunCheck, run: string): string {
  const table = markdownTable(
    ['file', 'line', 'field', 'message', 'severity'],
    rows.map((x) => [x.file, x.line ?? '', x.field ?? '', x.message, x.severity]),
  );
  const files = c.files.map((f) => `\`${f}\``).join(', ') || 'none';
  return [
    `# Run check of ${run}`,
    '',
    `${summaryLine(c, run)}.`,
    '',
    `Folder: \`${c.runDir}\`. Checked against docs/RUN_FOLDER.md (as \`attention-debugger check-run\` checks it).`,
    '',
    ...(rows.length ? [table, ''] : []),
    `Files checked: ${files}.`,
    '',
  ].join('\n');
}
