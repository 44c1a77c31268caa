/**
 * The run report (issue 33 item 1): one self-contained HTML file of a run that opens offline in any
 * browser. The engine collects what it shows (`RunReportData`, inlined into the file as JSON) and
 * writes the file (`report/write`, the CLI's `report`); the page `webview/report/page.ts` draws it.
 * Attention weights travel as base64 of little-endian float32 (the page decodes them with atob).
 */
import type { Pool } from '../algorithms/pool';
import type { AttentionKind } from './attention';
import { type Check, arrayOf, intIn, isAbsolutePath, isBoolean, isIndex, isString, object, optional } from './check';
import type { HeadReport } from './heads';
import type { MetricRow, SchedulePoint } from './metrics';
import type { RunEvent, TelemetryRow } from './telemetry';

/** The id of the script element that holds the report's data (type application/json). */
export const REPORT_DATA_ID = 'report-data';

/** One kind's maps of one snapshot pair: [layers, heads, queries, keys], weights base64 float32. */
export interface ReportMaps {
  kind: AttentionKind;
  shape: [number, number, number, number];
  /** Set when the maps were max-pooled to fit (each cell the largest weight of its block). */
  pool?: Pool;
  weights: string;
}

/** One probe pair of one snapshot. */
export interface ReportSnapshot {
  step: number;
  pair: number;
  srcTokens: string[];
  tgtTokens: string[];
  maps: ReportMaps[];
}

/** What the report's header says of the run. */
export interface ReportHeader {
  run: string;
  runDir: string;
  /** The model's shape and the training recipe, as name → value (config.json). */
  config: Record<string, string | number | boolean>;
  data: string;
  /** The newest logged step, and the steps the recipe planned. */
  step: number;
  totalSteps: number;
  /** The backend the run trained on, or null where the folder does not record it. */
  backend: string | null;
  /** status.json's state (completed, running, …), or null without one. */
  state: string | null;
  /** When the run started and last wrote (ISO 8601), from its metrics; null without rows. */
  started: string | null;
  lastWrite: string | null;
  /** When the report was written (ISO 8601). */
  written: string;
}

export interface RunReportData {
  v: 1;
  header: ReportHeader;
  rows: MetricRow[];
  schedule: SchedulePoint[];
  telemetry: TelemetryRow[];
  events: RunEvent[];
  snapshots: ReportSnapshot[];
  /** The run's snapshot steps, all of them (the report holds those `snapshots` names). */
  snapshotSteps: number[];
  heads: HeadReport | null;
  /** What the report left out or changed, for people: pooled maps, steps or pairs not chosen. */
  notes: string[];
}

/** At most this many steps and pairs can be named (a report of every snapshot names none). */
export const REPORT_MAX_CHOICES = 100_000;

/** report/write: the report of `runDir` written to `out` (absolute), whole or not at all. */
export interface ReportWriteParams {
  runDir: string;
  out: string;
  /** Snapshot steps to include (default every one). */
  steps?: number[];
  /** Probe pairs to include, by index (default 0). */
  pairs?: number[];
  /** Replace a file already at `out`. */
  force?: boolean;
}
export const checkReportWriteParams: Check<ReportWriteParams> = object<ReportWriteParams>({
  runDir: isAbsolutePath,
  out: isAbsolutePath,
  steps: optional(boundedList(isIndex)),
  pairs: optional(boundedList(intIn(0, 1023))),
  force: optional(isBoolean),
});

function boundedList(item: Check<number>): Check<number[]> {
  const list = arrayOf(item);
  return (v, path) =>
    Array.isArray(v) && v.length > REPORT_MAX_CHOICES
      ? `${path} must list at most ${REPORT_MAX_CHOICES} values, got ${v.length}`
      : list(v, path);
}

export interface ReportWriteResult {
  out: string;
  bytes: number;
  /** The snapshot steps the report holds. */
  steps: number[];
}
export const checkReportWriteResult: Check<ReportWriteResult> = object<ReportWriteResult>({
  out: isString,
  bytes: isIndex,
  steps: arrayOf(isIndex),
});
