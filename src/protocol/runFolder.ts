/**
 * The run folder: the contract between the trainers that write it (the engine, the PyTorch
 * RunWriter under python/) and the viewers that read it (the engine's run/open, the extension's
 * Runs view). docs/RUN_FOLDER.md describes it for people; this module names its files for code.
 * Both processes import it; it touches no file system.
 */

/** Stamped into config.json as `run_format`, with `run_format_version`. */
export const RUN_FORMAT = 'attention-debugger-run';

/**
 * 2: attention snapshots as safetensors (one tensor per kind and probe pair), status.json,
 * telemetry.jsonl and events.jsonl. 1 (unstamped): snapshots as nested JSON arrays.
 * Readers accept both; writers write 2.
 */
export const RUN_FORMAT_VERSION = 2;

export const RUN_FILES = {
  config: 'config.json',
  vocab: 'vocab.json',
  metrics: 'metrics.jsonl',
  telemetry: 'telemetry.jsonl',
  events: 'events.jsonl',
  status: 'status.json',
  /** The ablations tried on the run (Ablate Heads…), written by the extension: protocol/ablation.ts AblationRecord. */
  ablations: 'ablations.json',
  /** The trainer that writes the run, while it does (src/engine/run/lock.ts); readers ignore it. */
  lock: 'writer.lock',
  checkpoints: 'checkpoints',
  snapshots: 'snapshots',
} as const;

/**
 * The states status.json can hold; every one but `running` is an end marker. `diverged`, new after
 * 0.1.0 (still format 2: docs/RUN_FOLDER.md): the divergence check fired on the run.
 */
export const RUN_STATES = ['running', 'paused', 'completed', 'stopped', 'failed', 'diverged'] as const;
export type RunState = (typeof RUN_STATES)[number];

/**
 * What the folder says of its writer: `live` (status running, files written lately), `stalled`
 * (running, but nothing written for STALLED_AFTER_MS: the trainer hangs or died), `paused` (a
 * health check's breakpoint), `diverged` (ended, the divergence check fired), `finished`
 * (completed, stopped or failed: the writer's end marker).
 */
export const RUN_ACTIVITIES = ['live', 'stalled', 'paused', 'diverged', 'finished'] as const;
export type RunActivity = (typeof RUN_ACTIVITIES)[number];

/** Nothing written for this long by a run whose status says running: it stalled. */
export const STALLED_AFTER_MS = 60_000;

/** `checkpoints/step-N.safetensors`: the model at step N. */
export const CHECKPOINT_FILE = /^step-(\d+)\.safetensors$/;
/** `checkpoints/step-N.optim.safetensors`: Adam's moments and the data position, for resuming. */
export const OPTIMIZER_FILE = /^step-(\d+)\.optim\.safetensors$/;
/** `snapshots/step-N.safetensors` (format 2) or `snapshots/step-N.json` (format 1). */
export const SNAPSHOT_FILE = /^step-(\d+)\.(safetensors|json)$/;

export const checkpointName = (step: number): string => `step-${step}.safetensors`;
export const optimizerName = (step: number): string => `step-${step}.optim.safetensors`;
export const snapshotName = (step: number): string => `step-${step}.safetensors`;

/** The step a file name stands for under `pattern`, or undefined when it is not such a file. */
export function stepOf(pattern: RegExp, name: string): number | undefined {
  const m = pattern.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Names of the tensors of one probe pair in a snapshot file: `<kind>.<pair>`. */
export const snapshotTensorName = (kind: string, pair: number): string => `${kind}.${pair}`;
