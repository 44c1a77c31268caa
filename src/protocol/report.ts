/**
 * The run report (issue 33 item 1): one self-contained HTML file of a run that opens offline in any
 * browser. The engine collects what it shows (`RunReportData`, inlined into the file as JSON) and
 * writes the file (`report/write`, the CLI's `report`); the page `webview/report/page.ts` draws it.
 * Attention weights travel as base64 of little-endian float32 (the page decodes them with atob).
 */
import type { Pool } from '../algorithms/pool';
import { type AttentionKind, INPUT_LIMITS } from './attention';
import { type BeamTreeView, checkBeamTreeView } from './beamTree';
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
  /** The beam search tree the Beam Tree panel showed of this run when the report was asked for, or null. */
  beam: BeamTreeView | null;
  /** What the report left out or changed, for people: pooled maps, steps or pairs not chosen. */
  notes: string[];
}

/** At most this many steps and pairs can be named (a report of every snapshot names none). */
export const REPORT_MAX_CHOICES = 100_000;

/**
 * The most nodes a report's beam tree may hold: a search at the widest beam (MAX_BEAM) keeps 2 × 64
 * extensions a step, so this is some 780 steps of it, about 12 MB of JSON.
 */
export const REPORT_MAX_BEAM_NODES = 100_000;
/** The longest of a beam tree's lists, each checked before its items are. */
const BEAM_LIST_LIMITS = {
  nodes: REPORT_MAX_BEAM_NODES,
  nBest: REPORT_MAX_BEAM_NODES,
  srcIds: INPUT_LIMITS.tokens,
  srcTokens: INPUT_LIMITS.tokens,
  greedy: INPUT_LIMITS.tokens,
} as const;

/** A beam tree as checkBeamTreeView checks it, its lists and input bounded first. */
export const checkReportBeam: Check<BeamTreeView> = (v, path) => {
  if (typeof v === 'object' && v !== null) {
    const rec = v as Record<string, unknown>;
    for (const [field, max] of Object.entries(BEAM_LIST_LIMITS)) {
      const list = rec[field];
      if (Array.isArray(list) && list.length > max)
        return `${path}.${field} must list at most ${max} values, got ${list.length}`;
    }
    if (typeof rec.input === 'string' && rec.input.length > INPUT_LIMITS.chars)
      return `${path}.input has ${rec.input.length} characters, more than the ${INPUT_LIMITS.chars} an input may have`;
  }
  return checkBeamTreeView(v, path);
};

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
  /** A beam search tree of the run to show (the Beam Tree panel's, or a saved one): at most REPORT_MAX_BEAM_NODES nodes. */
  beam?: BeamTreeView;
}
export const checkReportWriteParams: Check<ReportWriteParams> = object<ReportWriteParams>({
  runDir: isAbsolutePath,
  out: isAbsolutePath,
  steps: optional(boundedList(isIndex)),
  pairs: optional(boundedList(intIn(0, 1023))),
  force: optional(isBoolean),
  beam: optional(checkReportBeam),
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
