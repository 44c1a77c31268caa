/** CSV and JSON exports (pure; no DOM), RFC 4180 quoting. */
import type { MetricRow } from '../../src/protocol/webview';
import type { HeadMap } from './attention';

export function csvField(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(fields: readonly (string | number | undefined)[]): string {
  return fields.map(csvField).join(',');
}

const METRIC_COLUMNS = ['step', 'loss', 'lr', 'tokensPerSec', 'gradNorm', 'valLoss', 'valBleu'] as const;

/** Every metrics row (not the downsampled display), one line each, header first. */
export function metricsCsv(rows: readonly MetricRow[]): string {
  return [csvLine(METRIC_COLUMNS), ...rows.map((r) => csvLine(METRIC_COLUMNS.map((c) => r[c])))].join('\n') + '\n';
}

/** One head's map: a header of key tokens, then a line per query token. */
export function headCsv(m: HeadMap): string {
  const lines = [csvLine(['query\\key', ...m.keyTokens])];
  for (let q = 0; q < m.queries; q++) {
    const row: (string | number)[] = [m.queryTokens[q] ?? String(q)];
    for (let k = 0; k < m.keys; k++) row.push(m.weights[q * m.keys + k]);
    lines.push(csvLine(row));
  }
  return lines.join('\n') + '\n';
}

/** One head's map as JSON (nested arrays: exports are for people and other tools). */
export function headJson(m: HeadMap, extra: Record<string, unknown>): string {
  const weights: number[][] = [];
  for (let q = 0; q < m.queries; q++) weights.push(Array.from(m.weights.subarray(q * m.keys, (q + 1) * m.keys)));
  return JSON.stringify({ ...extra, queryTokens: m.queryTokens, keyTokens: m.keyTokens, weights }, null, 1);
}
