/**
 * Training, decoding and inspection on the engine ↔ extension wire (same JSON-RPC connection as
 * engine.ts). Rows and attention reuse the webview's payload types; attention weights travel as
 * base64 of little-endian float32 (JSON cannot carry typed arrays), and the extension turns them
 * back into Float32Array for the panels.
 */
import { type Check, arrayOf, isFiniteNumber, isNothing, isString, object, oneOf } from './check';
import type { NotificationDef, RequestDef } from './engine';
import {
  ATTENTION_KINDS,
  type AttentionKind,
  checkMetricRow,
  checkSchedulePoint,
  type MetricRow,
  type SchedulePoint,
} from './webview';

const optional =
  (check: Check): Check =>
  (v, path) =>
    v === undefined ? undefined : check(v, path);
const isBoolean: Check = (v, path) =>
  typeof v === 'boolean' ? undefined : `${path} must be true or false, got ${typeof v}`;
const isCount: Check = (v, path) =>
  Number.isInteger(v) && (v as number) >= 0
    ? undefined
    : `${path} must be a whole number ≥ 0, got ${JSON.stringify(v)}`;

// ---- payloads ------------------------------------------------------------------------------

export const TASK_NAMES = ['copy', 'reverse', 'sort'] as const;
export type DataChoice =
  | { kind: 'task'; task: (typeof TASK_NAMES)[number] }
  | { kind: 'gettext'; lang: string }
  | { kind: 'files'; dir: string; srcLang?: string; tgtLang?: string };

const checkData: Check = (v, path) => {
  const kind = (v as { kind?: unknown } | null)?.kind;
  if (kind === 'task') return object({ task: oneOf(TASK_NAMES) })(v, path);
  if (kind === 'gettext') return object({ lang: isString })(v, path);
  if (kind === 'files')
    return object({ dir: isString, srcLang: optional(isString), tgtLang: optional(isString) })(v, path);
  return `${path}.kind must be one of task, gettext, files, got ${JSON.stringify(kind)}`;
};

/** All layers × heads of one kind, weights as base64 float32 (row-major [layers, heads, queries, keys]). */
export interface WireAttentionMaps {
  kind: AttentionKind;
  shape: [number, number, number, number];
  data: string;
}
export interface WireAttention {
  step: number;
  srcTokens: string[];
  tgtTokens: string[];
  maps: WireAttentionMaps[];
}
const checkWireAttention: Check = object({
  step: isFiniteNumber,
  srcTokens: arrayOf(isString),
  tgtTokens: arrayOf(isString),
  maps: arrayOf(object({ kind: oneOf(ATTENTION_KINDS), shape: arrayOf(isCount), data: isString })),
});

/** What a run is, for the dashboard and the side bar. */
export interface RunSummary {
  runDir: string;
  step: number;
  totalSteps: number;
  dModel: number;
  heads: number;
  encoderLayers: number;
  decoderLayers: number;
  data: string;
  schedule: SchedulePoint[];
  checkpoints: number[];
  snapshots: number[];
  running: boolean;
}
const checkRunSummary: Check = object({
  runDir: isString,
  step: isCount,
  totalSteps: isCount,
  dModel: isCount,
  heads: isCount,
  encoderLayers: isCount,
  decoderLayers: isCount,
  data: isString,
  schedule: arrayOf(checkSchedulePoint),
  checkpoints: arrayOf(isCount),
  snapshots: arrayOf(isCount),
  running: isBoolean,
});

// ---- requests ------------------------------------------------------------------------------

export interface TrainParams {
  runDir: string;
  data: DataChoice;
  /** tiny | small | base | big, or a JSON file. */
  config: string;
  steps?: number;
  /** Attention snapshots of the probe sentence every K steps (0: never); the config's default otherwise. */
  snapshotEvery?: number;
}
/** Starts a new run; training goes on in the engine, reported by train/metrics, train/snapshot, train/ended. */
export const trainStart: RequestDef<TrainParams, RunSummary> = {
  method: 'train/start',
  checkParams: object({
    runDir: isString,
    data: checkData,
    config: isString,
    steps: optional(isCount),
    snapshotEvery: optional(isCount),
  }),
  checkResult: checkRunSummary,
};

export const trainResume: RequestDef<{ runDir: string; steps?: number }, RunSummary> = {
  method: 'train/resume',
  checkParams: object({ runDir: isString, steps: optional(isCount) }),
  checkResult: checkRunSummary,
};

/** Stops the running training after the step in progress, with a checkpoint; answers once it is written. */
export const trainStop: RequestDef<void, { step: number; runDir: string } | null> = {
  method: 'train/stop',
  checkParams: isNothing,
  checkResult: (v, path) => (v === null ? undefined : object({ step: isCount, runDir: isString })(v, path)),
};

/** A run on disk: summary, every metrics row, checkpoints and snapshot steps. */
export const runOpen: RequestDef<{ runDir: string }, { summary: RunSummary; rows: MetricRow[] }> = {
  method: 'run/open',
  checkParams: object({ runDir: isString }),
  checkResult: object({ summary: checkRunSummary, rows: arrayOf(checkMetricRow) }),
};

export interface DecodeParams {
  /** A run folder, or a checkpoint (folder with config.json, or .safetensors) with a vocab.json in its run. */
  runDir: string;
  checkpoint?: string;
  text: string;
  beam?: number;
  alpha?: number;
}
export interface DecodeResult {
  text: string;
  score: number;
  logProb: number;
  attention: WireAttention;
}
export const decode: RequestDef<DecodeParams, DecodeResult> = {
  method: 'decode',
  checkParams: object({
    runDir: isString,
    checkpoint: optional(isString),
    text: isString,
    beam: optional(isCount),
    alpha: optional(isFiniteNumber),
  }),
  checkResult: object({
    text: isString,
    score: isFiniteNumber,
    logProb: isFiniteNumber,
    attention: checkWireAttention,
  }),
};

/** The probe sentence's attention at each snapshot step (for the head inspector's slider). */
export const snapshotsGet: RequestDef<{ runDir: string; steps?: number[] }, WireAttention[]> = {
  method: 'snapshots/get',
  checkParams: object({ runDir: isString, steps: optional(arrayOf(isCount)) }),
  checkResult: arrayOf(checkWireAttention),
};

/** The positional encoding of a run (learned rows) or the sinusoid for d_model × positions. */
export const positional: RequestDef<
  { runDir?: string; dModel?: number; positions?: number },
  { shape: [number, number]; data: string; learned: boolean }
> = {
  method: 'positional',
  checkParams: object({ runDir: optional(isString), dModel: optional(isCount), positions: optional(isCount) }),
  checkResult: object({ shape: arrayOf(isCount), data: isString, learned: isBoolean }),
};

// ---- notifications (engine → extension) ----------------------------------------------------

export const trainMetrics: NotificationDef<{ runDir: string; rows: MetricRow[] }> = {
  method: 'train/metrics',
  checkParams: object({ runDir: isString, rows: arrayOf(checkMetricRow) }),
};

export const trainSnapshot: NotificationDef<{ runDir: string; attention: WireAttention }> = {
  method: 'train/snapshot',
  checkParams: object({ runDir: isString, attention: checkWireAttention }),
};

export const TRAIN_END_REASONS = ['completed', 'stopped', 'failed'] as const;
export const trainEnded: NotificationDef<{
  runDir: string;
  step: number;
  reason: (typeof TRAIN_END_REASONS)[number];
  message?: string;
}> = {
  method: 'train/ended',
  checkParams: object({
    runDir: isString,
    step: isCount,
    reason: oneOf(TRAIN_END_REASONS),
    message: optional(isString),
  }),
};

// ---- float32 ↔ base64, usable on both sides (no Buffer in a webview, no atob in old Node) --------

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function float32ToBase64(values: Float32Array | number[]): string {
  const f = values instanceof Float32Array ? values : Float32Array.from(values);
  const bytes = new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out +=
      B64[(n >> 18) & 63] +
      B64[(n >> 12) & 63] +
      (i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=') +
      (i + 2 < bytes.length ? B64[n & 63] : '=');
  }
  return out;
}

export function base64ToFloat32(text: string): Float32Array {
  const clean = text.replace(/=+$/, '');
  const bytes = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let j = 0;
  for (let i = 0; i < clean.length; i += 4) {
    const n =
      (B64.indexOf(clean[i]) << 18) |
      (B64.indexOf(clean[i + 1]) << 12) |
      (Math.max(B64.indexOf(clean[i + 2] ?? 'A'), 0) << 6) |
      Math.max(B64.indexOf(clean[i + 3] ?? 'A'), 0);
    if (j < bytes.length) bytes[j++] = (n >> 16) & 255;
    if (j < bytes.length) bytes[j++] = (n >> 8) & 255;
    if (j < bytes.length) bytes[j++] = n & 255;
  }
  if (bytes.length % 4 !== 0)
    throw new Error(`base64 attention data of ${bytes.length} bytes is not whole float32 values`);
  return new Float32Array(bytes.buffer);
}
