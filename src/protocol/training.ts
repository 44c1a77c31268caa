/**
 * The payloads of the runs and training methods of the engine ↔ extension wire (methods.ts lists
 * the methods): a run's summary, what starts, resumes, stops and opens one, and the notifications
 * a training run sends. Attention travels as WireAttention (wire.ts: base64 weights).
 */
import {
  type Check,
  arrayOf,
  isBoolean,
  isIndex,
  intIn,
  isAbsolutePath,
  isString,
  numberIn,
  object,
  oneOf,
  optional,
  shown,
} from './check';
import { checkFollowState, type FollowState } from './follow';
import {
  CHECKS,
  type CheckMode,
  type CheckName,
  checkRunEvent,
  checkTelemetryRow,
  type RunEvent,
  type TelemetryRow,
} from './telemetry';
import { checkMetricRow, checkSchedulePoint, type MetricRow, type SchedulePoint } from './metrics';
import { checkWireAttention, type WireAttention } from './wire';

// ---- payloads ------------------------------------------------------------------------------

export const TASK_NAMES = ['copy', 'reverse', 'sort'] as const;
export type DataChoice =
  | { kind: 'task'; task: (typeof TASK_NAMES)[number] }
  | { kind: 'gettext'; lang: string }
  | { kind: 'files'; dir: string; srcLang?: string; tgtLang?: string };
/** One kind of DataChoice, without its `kind` (which picks the check). */
type DataOf<K extends DataChoice['kind']> = Omit<Extract<DataChoice, { kind: K }>, 'kind'>;

const checkCheckModes: Check<Partial<Record<CheckName, CheckMode>>> = (v, path) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${path} must be an object of check: mode`;
  for (const [k, mode] of Object.entries(v)) {
    const why = oneOf(CHECKS)(k, `${path} key`) ?? oneOf(['off', 'warn', 'break'])(mode, `${path}.${k}`);
    if (why) return why;
  }
  return undefined;
};

const checkData: Check<DataChoice> = (v, path) => {
  const kind = (v as { kind?: unknown } | null)?.kind;
  if (kind === 'task') return object<DataOf<'task'>>({ task: oneOf(TASK_NAMES) })(v, path);
  if (kind === 'gettext') return object<DataOf<'gettext'>>({ lang: isString })(v, path);
  if (kind === 'files')
    return object<DataOf<'files'>>({ dir: isAbsolutePath, srcLang: optional(isString), tgtLang: optional(isString) })(
      v,
      path,
    );
  return `${path}.kind must be one of task, gettext, files, got ${JSON.stringify(kind)}`;
};

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
  /** warmup_steps of eq. 3 (0 when the run does not say, e.g. a PyTorch checkpoint folder). */
  warmupSteps: number;
  schedule: SchedulePoint[];
  checkpoints: number[];
  snapshots: number[];
  running: boolean;
  /** The run has vocab.json: text can be typed (otherwise token ids). */
  vocab: boolean;
}
export const checkRunSummary: Check<RunSummary> = object({
  runDir: isString,
  step: isIndex,
  totalSteps: isIndex,
  dModel: isIndex,
  heads: isIndex,
  encoderLayers: isIndex,
  decoderLayers: isIndex,
  data: isString,
  warmupSteps: isIndex,
  schedule: arrayOf(checkSchedulePoint),
  checkpoints: arrayOf(isIndex),
  snapshots: arrayOf(isIndex),
  running: isBoolean,
  vocab: isBoolean,
});

// ---- train/start, train/resume, train/stop ---------------------------------------------------

export interface TrainParams {
  runDir: string;
  data: DataChoice;
  /** tiny | small | base | big, or a JSON file. */
  config: string;
  steps?: number;
  /** warmup_steps of eq. 3. */
  warmup?: number;
  /** A factor on eq. 3's whole curve. */
  lrFactor?: number;
  /** Padded source + target tokens a batch. */
  batchTokens?: number;
  /** Attention snapshots of the probe sentence every K steps (0: never); the config's default otherwise. */
  snapshotEvery?: number;
  /** Health checks' modes over the config's (the `attentionDebugger.checks` setting). */
  checks?: Partial<Record<CheckName, CheckMode>>;
  /** Watch conditions over telemetry (`cross:1.*.entropy < 0.2`), as the CLI's --watch: one that holds pauses the run. */
  watch?: string[];
}
/** train/start's config: a preset's name, or a JSON file by its absolute path. */
const isConfigName: Check<string> = (v, path) =>
  typeof v === 'string' && /^[a-z]+$/.test(v) ? undefined : isAbsolutePath(v, path);

/**
 * The largest step counts and batch a request can ask for (the paper's big model: 300,000 steps, 25,000 tokens).
 * The CLI's --steps and config.json's steps have the same limit (engine/run/limits.ts STEPS_LIMIT); whether
 * a batch fits in memory is the engine's memory estimate (engine/run/memory.ts).
 */
export const TRAIN_LIMITS = { steps: 10_000_000, batchTokens: 1_000_000, watches: 100, watchChars: 1000 };

/** A run's watch conditions: at most TRAIN_LIMITS.watches, each a non-empty string of at most watchChars (parsed by the engine). */
const checkWatches: Check<string[]> = (v, path) => {
  const why = arrayOf(isString)(v, path);
  if (why) return why;
  const xs = v as string[];
  if (xs.length > TRAIN_LIMITS.watches)
    return `${path} must hold at most ${TRAIN_LIMITS.watches} conditions, got ${xs.length}`;
  const i = xs.findIndex((x) => !x.trim() || x.length > TRAIN_LIMITS.watchChars);
  if (i >= 0)
    return `${path}[${i}] must be a condition of 1 to ${TRAIN_LIMITS.watchChars} characters, got ${shown(xs[i])}`;
  return undefined;
};

export const checkTrainParams: Check<TrainParams> = object({
  runDir: isAbsolutePath,
  data: checkData,
  config: isConfigName,
  steps: optional(intIn(1, TRAIN_LIMITS.steps)),
  warmup: optional(intIn(1, TRAIN_LIMITS.steps)),
  lrFactor: optional(numberIn(1e-6, 1e3)),
  batchTokens: optional(intIn(1, TRAIN_LIMITS.batchTokens)),
  snapshotEvery: optional(intIn(0, TRAIN_LIMITS.steps)),
  checks: optional(checkCheckModes),
  watch: optional(checkWatches),
});

/** JSON-RPC error codes of this protocol (beyond JSON-RPC's own), with `data` as noted. */
export const ENGINE_ERROR = {
  /** train/resume of a run already at its last step; data: { step, steps }. Resume with more `steps`. */
  runFinished: -32010,
} as const;

/**
 * Goes on with a run from its newest checkpoint. `steps` sets a new step budget (train N more
 * steps: the current step + N); without it a run already at its budget is refused (runFinished).
 */
export interface ResumeParams {
  runDir: string;
  steps?: number;
  /** Health checks to switch (e.g. a breakpoint's check turned off: "Disable Check"). */
  checks?: Partial<Record<CheckName, CheckMode>>;
  /** The run's watch conditions from now on (replacing those it had); [] clears them. */
  watch?: string[];
}
export const checkResumeParams: Check<ResumeParams> = object({
  runDir: isAbsolutePath,
  steps: optional(isIndex),
  checks: optional(checkCheckModes),
  watch: optional(checkWatches),
});

/** Where a stopped run stopped (null: nothing was training). */
export type StopResult = { step: number; runDir: string } | null;
export const checkStopResult: Check<StopResult> = (v, path) =>
  v === null ? undefined : object<NonNullable<StopResult>>({ step: isIndex, runDir: isString })(v, path);

// ---- run/open --------------------------------------------------------------------------------

/** `step`: the checkpoint the selection will read (the newest by default), checked before the run opens. */
export interface OpenParams {
  runDir: string;
  step?: number;
}
export const checkOpenParams: Check<OpenParams> = object({ runDir: isAbsolutePath, step: optional(isIndex) });

/** A run on disk: summary, every metrics row, telemetry row and event, and where a follower goes on from. */
export interface OpenedRun {
  summary: RunSummary;
  rows: MetricRow[];
  telemetry: TelemetryRow[];
  events: RunEvent[];
  follow: FollowState;
}
export const checkOpenedRun: Check<OpenedRun> = object({
  summary: checkRunSummary,
  rows: arrayOf(checkMetricRow),
  telemetry: arrayOf(checkTelemetryRow),
  events: arrayOf(checkRunEvent),
  follow: checkFollowState,
});

// ---- notifications of a training run (engine → extension) ----------------------------------

export interface TrainMetrics {
  runDir: string;
  rows: MetricRow[];
}
export const checkTrainMetrics: Check<TrainMetrics> = object({ runDir: isString, rows: arrayOf(checkMetricRow) });

export interface TrainSnapshot {
  runDir: string;
  attention: WireAttention;
}
export const checkTrainSnapshot: Check<TrainSnapshot> = object({ runDir: isString, attention: checkWireAttention });

export interface TrainTelemetry {
  runDir: string;
  row: TelemetryRow;
}
export const checkTrainTelemetry: Check<TrainTelemetry> = object({ runDir: isString, row: checkTelemetryRow });

/** A health check fired (a warning; a breakpoint ends the run with train/ended `paused`). */
export interface TrainEvent {
  runDir: string;
  event: RunEvent;
}
export const checkTrainEvent: Check<TrainEvent> = object({ runDir: isString, event: checkRunEvent });

/**
 * `paused`: a health check's breakpoint stopped the run with a checkpoint (`event` says which);
 * `diverged`: the divergence check fired (`event`), whether the run trained on to its end or stopped.
 */
export const TRAIN_END_REASONS = ['completed', 'stopped', 'failed', 'paused', 'diverged'] as const;
export interface TrainEnded {
  runDir: string;
  step: number;
  reason: (typeof TRAIN_END_REASONS)[number];
  message?: string;
  event?: RunEvent;
}
export const checkTrainEnded: Check<TrainEnded> = object({
  runDir: isString,
  step: isIndex,
  reason: oneOf(TRAIN_END_REASONS),
  message: optional(isString),
  event: optional(checkRunEvent),
});
