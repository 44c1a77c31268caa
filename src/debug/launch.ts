/**
 * The `launch` configuration of the `attention-debugger` debug type (package.json
 * contributes.debuggers): the Train command's options, checked as they arrive, and the train/start
 * params they make.
 */
import { isAbsolute } from 'node:path';
import { TASK_NAMES, type TrainParams } from '../protocol/training';

const EDITS = ['freezeHeads', 'maskHeads', 'reinitHeads'] as const;

export interface LaunchArgs {
  /** The run folder to create (absolute). */
  runDir: string;
  /** tiny | small | base | big, or a JSON config file by its absolute path. */
  config: string;
  /** One of the synthetic tasks (copy, reverse, sort). */
  task: (typeof TASK_NAMES)[number];
  /** The run's step budget: where the debugger ends (required: the debugger pauses short of it by lowering it). */
  steps: number;
  /** A tfjs backend for the engine (`serve --backend`); the first that loads otherwise. */
  backend?: string;
  /** Attention snapshots every K steps (0: never). */
  snapshotEvery?: number;
  /** Pause at step 0, before the first step. */
  stopOnEntry?: boolean;
  /** Restart Frame forks the run at the paused step with these head edits (`kind:layer.head` ids). */
  fork?: { freezeHeads?: string[]; maskHeads?: string[]; reinitHeads?: string[] };
}

/** The launch arguments as VS Code sends them, checked; throws naming the field that is wrong. */
export function checkLaunchArgs(a: Record<string, unknown>): LaunchArgs {
  const fail = (field: string, want: string): never => {
    throw new Error(`launch.json: "${field}" must be ${want}, got ${JSON.stringify(a[field])}`);
  };
  if (typeof a['runDir'] !== 'string' || !isAbsolute(a['runDir'])) fail('runDir', 'an absolute path');
  const config = a['config'];
  if (typeof config !== 'string' || !(/^[a-z]+$/.test(config) || isAbsolute(config)))
    fail('config', 'a preset (tiny, small, base, big) or an absolute path to a JSON config');
  if (!(TASK_NAMES as readonly unknown[]).includes(a['task'])) fail('task', `one of ${TASK_NAMES.join(', ')}`);
  const steps = a['steps'];
  if (!Number.isInteger(steps) || (steps as number) < 1) fail('steps', 'a whole number ≥ 1');
  if (a['backend'] !== undefined && typeof a['backend'] !== 'string') fail('backend', 'a backend name');
  const every = a['snapshotEvery'];
  if (every !== undefined && (!Number.isInteger(every) || (every as number) < 0))
    fail('snapshotEvery', 'a whole number ≥ 0');
  if (a['stopOnEntry'] !== undefined && typeof a['stopOnEntry'] !== 'boolean') fail('stopOnEntry', 'true or false');
  const fork = a['fork'] as Record<string, unknown> | undefined;
  const heads = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  if (fork !== undefined && (typeof fork !== 'object' || fork === null || !EDITS.every((e) => heads(fork[e]))))
    fail('fork', `an object of head lists (${EDITS.join(', ')}: ["cross:0.1", …])`);
  return a as unknown as LaunchArgs;
}

/** train/start's params for the launch, with the step budget `steps` (where the run pauses next). */
export function trainParams(a: LaunchArgs, steps: number): TrainParams {
  return {
    runDir: a.runDir,
    data: { kind: 'task', task: a.task },
    config: a.config,
    steps,
    ...(a.snapshotEvery !== undefined ? { snapshotEvery: a.snapshotEvery } : {}),
  };
}
