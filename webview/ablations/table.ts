/**
 * The Ablation Results table's rows from the ablations tried on a run (protocol/ablation.ts
 * AblationRecord): which heads, how, at which step, the metric as trained and ablated, their
 * difference Δ = ablated − intact, and on how many test sentences; the table as CSV, JSON and
 * Markdown. Pure: the page draws it (webview/ablations/page.ts).
 */
import type { AblationMode, AblationRecord } from '../../src/protocol/ablation';
import { csvLine, markdownTable } from '../../src/protocol/export';
import { HEAD_METRIC } from '../../src/protocol/heads';

export interface AblationRow {
  /** 1 = the first ablation tried on the run. */
  n: number;
  /** The heads ablated, by their one name, comma-separated. */
  heads: string;
  mode: AblationMode;
  step: number;
  metric: AblationRecord['metric'];
  intact: number;
  ablated: number;
  /** ablated − intact: negative when removing the heads costs the metric. */
  delta: number;
  sentences: number;
}
export type AblationKey = keyof AblationRow;

/** One row per ablation, oldest first. */
export function ablationRows(records: readonly AblationRecord[]): AblationRow[] {
  return records.map((r, i) => ({
    n: i + 1,
    heads: r.ablation.heads.join(', '),
    mode: r.ablation.mode,
    step: r.step,
    metric: r.metric,
    intact: r.intact,
    ablated: r.ablated,
    delta: r.ablated - r.intact,
    sentences: r.sentences,
  }));
}

/** A Δ as the table shows it: signed, one decimal (`−54.5`, `+0.0`). */
export const signed = (d: number): string => `${d < 0 ? '−' : '+'}${Math.abs(d).toFixed(1)}`;

const HEADER = ['#', 'heads', 'mode', 'step', 'metric', 'intact', 'ablated', 'delta', 'sentences'];
const cells = (x: AblationRow) => [x.n, x.heads, x.mode, x.step, x.metric, x.intact, x.ablated, x.delta, x.sentences];

export function ablationsCsv(rows: readonly AblationRow[], runDir: string): string {
  return [`# run: ${runDir}`, csvLine(HEADER), ...rows.map((x) => csvLine(cells(x))), ''].join('\n');
}

export function ablationsJson(rows: readonly AblationRow[], runDir: string): string {
  return `${JSON.stringify({ run: runDir, ablations: rows }, null, 2)}\n`;
}

export function ablationsMarkdown(rows: readonly AblationRow[], runDir: string): string {
  const table = markdownTable(
    ['#', 'heads', 'mode', 'step', 'metric', 'intact', 'ablated', 'Δ', 'test sentences'],
    rows.map((x) => [
      x.n,
      x.heads,
      x.mode,
      x.step,
      HEAD_METRIC[x.metric],
      x.intact.toFixed(1),
      x.ablated.toFixed(1),
      signed(x.delta),
      x.sentences,
    ]),
  );
  return `# Ablations of ${runDir}\n\nDecoded greedily on the run's test split; Δ = ablated − intact.\n\n${table}\n`;
}
