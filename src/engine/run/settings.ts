import { CHECKS, type CheckMode, type CheckName, DEFAULT_CHECK_MODES } from '../../protocol/telemetry';
import { overLimit, SETTING_LIMITS } from './limits';

/** Training settings: the paper's recipe by default, with sizes that suit each preset. Saved in config.json under "training". */
export interface TrainingSettings {
  steps: number;
  warmup: number; // warmup_steps of eq. 3
  lr_factor: number; // scales eq. 3
  batch_tokens: number; // padded source + target tokens a batch (§5.1: ~25,000 + 25,000)
  accumulate?: number; // micro-batches a batch is split into, one Adam step for them all (default 1: train/accumulate.ts)
  label_smoothing: number; // ε_ls (§5.4)
  clip_norm: number; // 0: no clipping
  seed: number;
  checkpoint_every: number;
  eval_every: number;
  snapshot_every: number; // attention of the probe sentence every K steps (0: never)
  vocab_size: number; // BPE target size (§5.1: ~37,000 shared)
  max_length: number; // longest sentence kept, in tokens
  bleu_sentences: number; // validation sentences decoded for BLEU at each evaluation (0: none)
  telemetry_every?: number; // per-head statistics every K steps (0: never; default: snapshot_every)
  telemetry_pairs?: number; // held-out pairs of the probe batch (default 32)
  checks?: Partial<Record<CheckName, CheckMode>>; // health checks: off, warn or break (telemetry/checks.ts)
  freeze_heads?: string[]; // heads (cross:0.1) whose weights get no updates (a fork's change, run/fork.ts)
  mask_heads?: string[]; // heads removed before W^O (ξ = 0) throughout: their W^O columns held at zero
  watch?: string[]; // conditions over telemetry (telemetry/watch.ts); one that holds is the check `watch`
}

/** The settings that hold a number (what the CLI's numeric flags set). */
export type NumericSetting = {
  [K in keyof TrainingSettings]-?: NonNullable<TrainingSettings[K]> extends number ? K : never;
}[keyof TrainingSettings];

/** The heads whose weights training leaves unchanged: the frozen ones, and the masked ones. */
export const heldHeads = (s: TrainingSettings): string[] => [...(s.freeze_heads ?? []), ...(s.mask_heads ?? [])];

/** Telemetry every K steps: the setting, or the snapshots' interval. */
export const telemetryEvery = (s: TrainingSettings): number => s.telemetry_every ?? s.snapshot_every;
export const telemetryPairs = (s: TrainingSettings): number => s.telemetry_pairs ?? 32;
export const checkMode = (s: TrainingSettings, check: CheckName): CheckMode =>
  s.checks?.[check] ?? DEFAULT_CHECK_MODES[check];

const PAPER: TrainingSettings = {
  steps: 100000,
  warmup: 4000,
  lr_factor: 1,
  batch_tokens: 50000,
  label_smoothing: 0.1,
  clip_norm: 0,
  seed: 1,
  checkpoint_every: 1000,
  eval_every: 1000,
  snapshot_every: 100,
  vocab_size: 37000,
  max_length: 100,
  bleu_sentences: 200,
};

/** Per-preset defaults; the small ones fit two cores and minutes, not days. */
export const TRAINING_DEFAULTS: Record<string, TrainingSettings> = {
  tiny: {
    ...PAPER,
    steps: 1500,
    warmup: 400,
    batch_tokens: 1500,
    checkpoint_every: 250,
    eval_every: 250,
    snapshot_every: 25,
    vocab_size: 8000,
    max_length: 60,
    bleu_sentences: 100,
  },
  small: {
    ...PAPER,
    steps: 20000,
    warmup: 2000,
    batch_tokens: 6000,
    checkpoint_every: 500,
    eval_every: 500,
    snapshot_every: 50,
    vocab_size: 8000,
    max_length: 80,
    bleu_sentences: 200,
  },
  base: PAPER,
  big: { ...PAPER, steps: 300000 },
};

/** Every field of "training" in config.json (a --config file with another is refused, with the nearest name). */
export const TRAINING_FIELDS: readonly string[] = [
  ...Object.keys(PAPER),
  'accumulate',
  'telemetry_every',
  'telemetry_pairs',
  'checks',
  'freeze_heads',
  'mask_heads',
  'watch',
];

/**
 * What a resume may change: the step budget (train on to more steps in all), what is observed
 * while training, and the micro-batches a step's batch is split into (to fit the GPU's memory). The
 * recipe and the data stay as the run was created: its checkpoints, Adam's moments and its data
 * position mean something only with them.
 */
export const RESUME_FIELDS: readonly (keyof TrainingSettings)[] = [
  'steps',
  'checkpoint_every',
  'eval_every',
  'snapshot_every',
  'bleu_sentences',
  'telemetry_every',
  'telemetry_pairs',
  'checks',
  'watch',
  'accumulate', // how a step's batch is computed, not what it is: the step is the same (train/accumulate.ts)
];

/** Refuses resume overrides of the recipe or the data, naming the first such setting. */
export function checkResumeOverrides(overrides: Partial<TrainingSettings>, source: string): void {
  for (const key of Object.keys(overrides))
    if (!(RESUME_FIELDS as readonly string[]).includes(key))
      throw new Error(
        `${source}: ${key} is fixed when a run is created (its checkpoints and data position depend on it); ` +
          `a resume may change only ${RESUME_FIELDS.join(', ')}. Start a new run to change ${key}.`,
      );
}

const POSITIVE_INT: (keyof TrainingSettings)[] = [
  'steps',
  'warmup',
  'batch_tokens',
  'checkpoint_every',
  'eval_every',
  'vocab_size',
  'max_length',
];
const NON_NEGATIVE_INT: (keyof TrainingSettings)[] = ['snapshot_every', 'bleu_sentences', 'seed'];

export function validateSettings(raw: Record<string, unknown>, source: string): TrainingSettings {
  const s = raw as unknown as TrainingSettings;
  const fail = (field: string, msg: string): never => {
    throw new Error(`${source}: ${field}: ${msg}`);
  };
  for (const f of POSITIVE_INT)
    if (!Number.isInteger(s[f]) || (s[f] as number) < 1)
      fail(f, `expected a whole number ≥ 1, got ${JSON.stringify(s[f])}`);
  for (const f of NON_NEGATIVE_INT)
    if (!Number.isInteger(s[f]) || (s[f] as number) < 0)
      fail(f, `expected a whole number ≥ 0, got ${JSON.stringify(s[f])}`);
  for (const [f, limit] of Object.entries(SETTING_LIMITS)) {
    const over = overLimit(f, s[f as keyof typeof SETTING_LIMITS], limit);
    if (over) throw new Error(`${source}: ${over}`);
  }
  if (typeof s.lr_factor !== 'number' || !(s.lr_factor > 0))
    fail('lr_factor', `expected a positive number, got ${JSON.stringify(s.lr_factor)}`);
  if (typeof s.label_smoothing !== 'number' || !(s.label_smoothing >= 0 && s.label_smoothing < 1))
    fail('label_smoothing', `expected a number in [0, 1), got ${JSON.stringify(s.label_smoothing)}`);
  if (typeof s.clip_norm !== 'number' || !(s.clip_norm >= 0))
    fail('clip_norm', `expected a number ≥ 0, got ${JSON.stringify(s.clip_norm)}`);
  if (s.accumulate !== undefined && (!Number.isInteger(s.accumulate) || s.accumulate < 1))
    fail('accumulate', `expected a whole number ≥ 1, got ${JSON.stringify(s.accumulate)}`);
  for (const f of ['telemetry_every', 'telemetry_pairs'] as const)
    if (s[f] !== undefined && (!Number.isInteger(s[f]) || (s[f] as number) < 0))
      fail(f, `expected a whole number ≥ 0, got ${JSON.stringify(s[f])}`);
  if (s.watch !== undefined && (!Array.isArray(s.watch) || !s.watch.every((x) => typeof x === 'string')))
    fail('watch', `expected an array of conditions like "cross:1.*.entropy < 0.2", got ${JSON.stringify(s.watch)}`);
  for (const f of ['freeze_heads', 'mask_heads'] as const)
    if (s[f] !== undefined && (!Array.isArray(s[f]) || !s[f].every((x) => typeof x === 'string')))
      fail(f, `expected an array of head ids like "cross:0.1", got ${JSON.stringify(s[f])}`);
  if (s.checks !== undefined) {
    if (typeof s.checks !== 'object' || s.checks === null) fail('checks', 'expected an object of check: mode');
    for (const [name, mode] of Object.entries(s.checks)) {
      if (!(CHECKS as readonly string[]).includes(name))
        fail(`checks.${name}`, `unknown check (expected one of ${CHECKS.join(', ')})`);
      if (!['off', 'warn', 'break'].includes(mode as string))
        fail(`checks.${name}`, `expected off, warn or break, got ${JSON.stringify(mode)}`);
    }
  }
  return s;
}
