/**
 * Training, decoding and inspection on the engine ↔ extension wire (the JSON-RPC connection of
 * engine.ts). Attention travels as WireAttention (wire.ts: base64 weights); the extension decodes
 * it once, where it enters its process.
 */
import {
  type Check,
  arrayOf,
  isBoolean,
  isFiniteNumber,
  isIndex,
  isNothing,
  intIn,
  isAbsolutePath,
  isString,
  numberIn,
  object,
  oneOf,
  optional,
} from './check';
import { checkFollowState, type FollowState } from './follow';
import { checkInputPair, type InputPair } from './attention';
import { type BeamTreeView, checkBeamTreeView, EARLY_STOPS, type EarlyStop, MAX_BEAM } from './beamTree';
import { checkHeadReport, type HeadReport } from './heads';
import { type Ablation, type AblationEffect, checkAblation, checkAblationEffect } from './ablation';
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
import type { NotificationDef, RequestDef } from './rpc';
import { checkWireAttention, checkWireMatrix, type WireAttention, type WireMatrix } from './wire';

// ---- payloads ------------------------------------------------------------------------------

export const TASK_NAMES = ['copy', 'reverse', 'sort'] as const;
export type DataChoice =
  | { kind: 'task'; task: (typeof TASK_NAMES)[number] }
  | { kind: 'gettext'; lang: string }
  | { kind: 'files'; dir: string; srcLang?: string; tgtLang?: string };

const checkCheckModes: Check = (v, path) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${path} must be an object of check: mode`;
  for (const [k, mode] of Object.entries(v)) {
    const why = oneOf(CHECKS)(k, `${path} key`) ?? oneOf(['off', 'warn', 'break'])(mode, `${path}.${k}`);
    if (why) return why;
  }
  return undefined;
};

const checkData: Check = (v, path) => {
  const kind = (v as { kind?: unknown } | null)?.kind;
  if (kind === 'task') return object({ task: oneOf(TASK_NAMES) })(v, path);
  if (kind === 'gettext') return object({ lang: isString })(v, path);
  if (kind === 'files')
    return object({ dir: isAbsolutePath, srcLang: optional(isString), tgtLang: optional(isString) })(v, path);
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
export const checkRunSummary: Check = object({
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

// ---- requests ------------------------------------------------------------------------------

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
}
/** train/start's config: a preset's name, or a JSON file by its absolute path. */
const isConfigName: Check = (v, path) =>
  typeof v === 'string' && /^[a-z]+$/.test(v) ? undefined : isAbsolutePath(v, path);

/**
 * The largest step counts and batch a request can ask for (the paper's big model: 300,000 steps, 25,000 tokens).
 * The CLI's --steps and config.json's steps have the same limit (engine/run/limits.ts STEPS_LIMIT); whether
 * a batch fits in memory is the engine's memory estimate (engine/run/memory.ts).
 */
export const TRAIN_LIMITS = { steps: 10_000_000, batchTokens: 1_000_000 };

/** Starts a new run; training goes on in the engine, reported by train/metrics, train/snapshot, train/ended. */
export const trainStart: RequestDef<TrainParams, RunSummary> = {
  method: 'train/start',
  checkParams: object({
    runDir: isAbsolutePath,
    data: checkData,
    config: isConfigName,
    steps: optional(intIn(1, TRAIN_LIMITS.steps)),
    warmup: optional(intIn(1, TRAIN_LIMITS.steps)),
    lrFactor: optional(numberIn(1e-6, 1e3)),
    batchTokens: optional(intIn(1, TRAIN_LIMITS.batchTokens)),
    snapshotEvery: optional(intIn(0, TRAIN_LIMITS.steps)),
    checks: optional(checkCheckModes),
  }),
  checkResult: checkRunSummary,
};

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
}
export const trainResume: RequestDef<ResumeParams, RunSummary> = {
  method: 'train/resume',
  checkParams: object({ runDir: isAbsolutePath, steps: optional(isIndex), checks: optional(checkCheckModes) }),
  checkResult: checkRunSummary,
};

/** Stops the running training after the step in progress, with a checkpoint; answers once it is written. */
export const trainStop: RequestDef<void, { step: number; runDir: string } | null> = {
  method: 'train/stop',
  checkParams: isNothing,
  checkResult: (v, path) => (v === null ? undefined : object({ step: isIndex, runDir: isString })(v, path)),
};

/** A run on disk: summary, every metrics row, telemetry row and event, and where a follower goes on from. */
export interface OpenedRun {
  summary: RunSummary;
  rows: MetricRow[];
  telemetry: TelemetryRow[];
  events: RunEvent[];
  follow: FollowState;
}
/** `step`: the checkpoint the selection will read (the newest by default), checked before the run opens. */
export const runOpen: RequestDef<{ runDir: string; step?: number }, OpenedRun> = {
  method: 'run/open',
  checkParams: object({ runDir: isAbsolutePath, step: optional(isIndex) }),
  checkResult: object({
    summary: checkRunSummary,
    rows: arrayOf(checkMetricRow),
    telemetry: arrayOf(checkTelemetryRow),
    events: arrayOf(checkRunEvent),
    follow: checkFollowState,
  }),
};

/** Attention of a sentence pair at a checkpoint of a run (computed by the engine, training untouched). */
export interface AttentionParams {
  /** A run folder, or a checkpoint folder (config.json and model.safetensors) written by PyTorch. */
  runDir: string;
  /** The checkpoint's step (checkpoints/step-N.safetensors); the newest when absent. */
  step?: number;
  input: InputPair;
  /** Beam size when the target is decoded (no target given); 1 decodes greedily. Default 4. */
  beam?: number;
}
/** What the model made of a source when no target was given. */
export interface Decoded {
  text: string;
  tokens: string[];
  /** log P(Y | X) / lp(|Y|), the GNMT length penalty with α 0.6. */
  score: number;
  logProb: number;
}
export interface AttentionResult {
  attention: WireAttention;
  /** The decoded target, when the input gave none. */
  decoded?: Decoded;
  /** log p of each target token after BOS, and of EOS last (teacher-forced). */
  tokenLogProbs: number[];
}
export const attentionGet: RequestDef<AttentionParams, AttentionResult> = {
  method: 'attention/get',
  checkParams: object({
    runDir: isAbsolutePath,
    step: optional(isIndex),
    input: checkInputPair,
    beam: optional(intIn(1, MAX_BEAM)),
  }),
  checkResult: object({
    attention: checkWireAttention,
    decoded: optional(
      object({ text: isString, tokens: arrayOf(isString), score: isFiniteNumber, logProb: isFiniteNumber }),
    ),
    tokenLogProbs: arrayOf(isFiniteNumber),
  }),
};

/** A sentence's beam search at a checkpoint, with its whole search tree (the Beam Tree panel). */
export interface BeamTreeParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** The source: text, or ids for a run without vocab.json (a target, if given, is ignored). */
  input: InputPair;
  /** Beam size k, default 4. */
  beam?: number;
  /** Length-penalty exponent α, default 0.6. */
  alpha?: number;
  earlyStop?: EarlyStop;
}
export const beamTreeGet: RequestDef<BeamTreeParams, BeamTreeView> = {
  method: 'beam/tree',
  checkParams: object({
    runDir: isAbsolutePath,
    step: optional(isIndex),
    input: checkInputPair,
    beam: optional(intIn(1, MAX_BEAM)),
    alpha: optional(numberIn(0, 10)),
    earlyStop: optional(oneOf(EARLY_STOPS)),
  }),
  checkResult: checkBeamTreeView,
};

/** Which heads matter: importance and pruning curves of a checkpoint (protocol/heads.ts). */
export interface HeadReportParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** Held-out pairs for the importance (default 256). */
  pairs?: number;
  /** Test sentences for the metric (default 200). */
  limit?: number;
  /** Seed of the random order (default 1). */
  seed?: number;
}
export const headsReport: RequestDef<HeadReportParams, HeadReport> = {
  method: 'heads/report',
  checkParams: object({
    runDir: isAbsolutePath,
    step: optional(isIndex),
    pairs: optional(intIn(1, 4096)),
    limit: optional(intIn(1, 10000)),
    seed: optional(isIndex),
  }),
  checkResult: checkHeadReport,
};

/**
 * heads/report's progress: `done` of `total` pruning points measured (each curve scores the intact
 * model, then one head more removed at a time), so the wait of minutes can be shown.
 */
export const headsProgress: NotificationDef<{ runDir: string; done: number; total: number }> = {
  method: 'heads/progress',
  checkParams: object({ runDir: isString, done: isIndex, total: isIndex }),
};

/** What ablating heads does to an input at a checkpoint (protocol/ablation.ts). */
export interface AblationEffectParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  input: InputPair;
  ablation: Ablation;
}
export const ablationEffect: RequestDef<AblationEffectParams, AblationEffect> = {
  method: 'ablation/effect',
  checkParams: object({
    runDir: isAbsolutePath,
    step: optional(isIndex),
    input: checkInputPair,
    ablation: checkAblation,
  }),
  checkResult: checkAblationEffect,
};

/** The probe sentence's attention at each snapshot step (for the head inspector's slider). */
export const snapshotsGet: RequestDef<{ runDir: string; steps?: number[] }, WireAttention[]> = {
  method: 'snapshots/get',
  checkParams: object({ runDir: isAbsolutePath, steps: optional(arrayOf(isIndex)) }),
  checkResult: arrayOf(checkWireAttention),
};

/** The positional encoding of a run (learned rows) or the sinusoid for d_model × positions. */
/** The largest encoding `positional` draws: its width, its length, and their product (4 M values, 16 MB). */
export const POSITIONAL_LIMITS = { dModel: 8192, positions: 16384, values: 1 << 22 };

function positionalSize(p: { dModel?: number; positions?: number }, path: string): string | undefined {
  const values = (p.dModel ?? 512) * (p.positions ?? 128);
  return values > POSITIONAL_LIMITS.values
    ? `${path}: positions × dModel is ${values.toLocaleString('en-US')} values, more than the ` +
        `${POSITIONAL_LIMITS.values.toLocaleString('en-US')} a view can show; ask for fewer positions`
    : undefined;
}

export const positional: RequestDef<
  { runDir?: string; dModel?: number; positions?: number },
  WireMatrix & { learned: boolean }
> = {
  method: 'positional',
  checkParams: (v, path) =>
    object({
      runDir: optional(isAbsolutePath),
      dModel: optional(intIn(2, POSITIONAL_LIMITS.dModel)),
      positions: optional(intIn(1, POSITIONAL_LIMITS.positions)),
    })(v, path) ?? positionalSize(v as { dModel?: number; positions?: number }, path),
  checkResult: (v, path) => checkWireMatrix(v, path) ?? object({ learned: isBoolean })(v, path),
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

export const trainTelemetry: NotificationDef<{ runDir: string; row: TelemetryRow }> = {
  method: 'train/telemetry',
  checkParams: object({ runDir: isString, row: checkTelemetryRow }),
};

/** A health check fired (a warning; a breakpoint ends the run with train/ended `paused`). */
export const trainEvent: NotificationDef<{ runDir: string; event: RunEvent }> = {
  method: 'train/event',
  checkParams: object({ runDir: isString, event: checkRunEvent }),
};

/**
 * `paused`: a health check's breakpoint stopped the run with a checkpoint (`event` says which);
 * `diverged`: the divergence check fired (`event`), whether the run trained on to its end or stopped.
 */
export const TRAIN_END_REASONS = ['completed', 'stopped', 'failed', 'paused', 'diverged'] as const;
export const trainEnded: NotificationDef<{
  runDir: string;
  step: number;
  reason: (typeof TRAIN_END_REASONS)[number];
  message?: string;
  event?: RunEvent;
}> = {
  method: 'train/ended',
  checkParams: object({
    runDir: isString,
    step: isIndex,
    reason: oneOf(TRAIN_END_REASONS),
    message: optional(isString),
    event: optional(checkRunEvent),
  }),
};
