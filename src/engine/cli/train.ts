/** `train`: the paper's recipe on a built-in task, parallel files, or the machine's gettext catalogs. */
import { initBackend } from '../backend';
import { taskSpec, type DataSpec } from '../data/dataset';
import { type NumericSetting, RESUME_FIELDS, type TrainingSettings } from '../run/settings';
import { openRun, prepareRun } from '../run/setup';
import { startTrainer } from '../train/start';
import { createFork, describeFork } from '../run/fork';
import { FORK_SPECS, forkOption } from './forkOptions';
import { numberOption, type OptionSpec, parseCommand, UsageError } from './args';
import { Progress } from './progress';
import { overLimit, SETTING_LIMITS, telemetryPairsLimit } from '../run/limits';
import { GPU_FAILED_EXIT, GpuTrainingFailure } from '../train/gpuFailure';
import { GPU_MEMORY_ENV } from '../backend/webgpu/memorySize';
import { CHECKS, type CheckName, describeFinding } from '../../protocol/telemetry';
import { commaList } from '../../protocol/check';

/** `train`'s exit code when the divergence check fired (3 breakpoint, 4 GPU failure: gpuFailure.ts). */
export const DIVERGED_EXIT = 5;

const NUMERIC: Record<string, NumericSetting> = {
  steps: 'steps',
  warmup: 'warmup',
  'lr-factor': 'lr_factor',
  'batch-tokens': 'batch_tokens',
  accumulate: 'accumulate',
  'label-smoothing': 'label_smoothing',
  'clip-norm': 'clip_norm',
  seed: 'seed',
  'checkpoint-every': 'checkpoint_every',
  'eval-every': 'eval_every',
  'snapshot-every': 'snapshot_every',
  'telemetry-every': 'telemetry_every',
  'telemetry-pairs': 'telemetry_pairs',
  'vocab-size': 'vocab_size',
  'max-length': 'max_length',
  'bleu-sentences': 'bleu_sentences',
};

const specs: Record<string, OptionSpec> = {
  task: { type: 'string', help: 'built-in task: copy | reverse | sort' },
  data: { type: 'string', help: 'folder with train.<src>/train.<tgt> (or train.tsv), optional valid.* and test.*' },
  'src-lang': {
    type: 'string',
    help: 'source language suffix in --data (e.g. en; default: en if one file is .en, else the alphabetically first)',
  },
  'tgt-lang': { type: 'string', help: 'target language suffix in --data (e.g. de; default: the other suffix)' },
  gettext: { type: 'string', help: 'English→LANG pairs from /usr/share/locale/LANG/LC_MESSAGES/*.mo' },
  config: { type: 'string', help: 'tiny | small | base | big | a JSON file (default tiny)' },
  out: { type: 'string', help: 'run folder to create, or to continue with --resume' },
  resume: {
    type: 'boolean',
    help: 'continue the run in --out from its newest checkpoint (with --steps N: train on to N steps in all)',
  },
  'max-minutes': { type: 'string', help: 'stop (with a checkpoint) after this many minutes of training' },
  backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu' },
  'gpu-memory': {
    type: 'string',
    help: `the GPU's memory in GiB, for the webgpu memory check (WebGPU does not tell it; default: ${GPU_MEMORY_ENV}, else nvidia-smi)`,
  },
  'break-on': {
    type: 'string',
    help: `pause with a checkpoint (exit code 3) when a health check fires: ${CHECKS.join(', ')} (comma-separated)`,
  },
  watch: {
    type: 'string',
    help:
      'pause with a checkpoint (exit code 3) at the first telemetry row where a condition holds, e.g. ' +
      '"cross:1.*.entropy < 0.2; max(decoder_self:*.*.confidence) > 0.95 && step > 500" (docs/TELEMETRY.md)',
  },
  ...FORK_SPECS,
  ...Object.fromEntries(
    Object.entries(NUMERIC).map(([flag, key]) => [
      flag,
      { type: 'string', help: `training setting ${key}` } as OptionSpec,
    ]),
  ),
  accumulate: {
    type: 'string',
    help:
      "split each step's batch (--batch-tokens) into N micro-batches, one Adam step for them all: the same step " +
      'in about 1/N of the activation memory (default 1; a resume may change it). A step the GPU fails exits with code 4',
  },
};

function dataSpec(o: Record<string, string | boolean | undefined>): DataSpec {
  const given = ['task', 'data', 'gettext'].filter((k) => o[k]);
  if (given.length !== 1)
    throw new UsageError(
      `train: give exactly one of --task, --data, --gettext (got ${given.length ? given.map((g) => `--${g}`).join(', ') : 'none'})`,
    );
  if (o.task) return taskSpec(o.task as string);
  if (o.gettext) return { kind: 'gettext', lang: o.gettext as string };
  return {
    kind: 'files',
    dir: o.data as string,
    ...(o['src-lang'] ? { srcLang: o['src-lang'] as string } : {}),
    ...(o['tgt-lang'] ? { tgtLang: o['tgt-lang'] as string } : {}),
  };
}

/** Options a new run takes and a resume refuses: the run's config.json fixes them. */
const NEW_RUN_ONLY = ['task', 'data', 'gettext', 'src-lang', 'tgt-lang', 'config'];

/** Refuses what a resume cannot change, rather than ignoring it; --steps N trains on to N steps in all. */
function checkResumeOptions(o: Record<string, string | boolean | undefined>): void {
  const fixed = NEW_RUN_ONLY.find((k) => o[k] !== undefined);
  if (fixed)
    throw new UsageError(
      `train --resume: --${fixed} is fixed by the run's config.json (a resume reads its data and model from there); ` +
        'leave it out, or start a new run with another --out',
    );
  for (const [flag, key] of Object.entries(NUMERIC))
    if (o[flag] !== undefined && !RESUME_FIELDS.includes(key))
      throw new UsageError(
        `train --resume: --${flag} is fixed when a run is created (its checkpoints and data position depend on it); ` +
          `a resume may change only --steps (a new total: "train N more steps" is --steps CURRENT+N) and ` +
          'the intervals of checkpoints, evaluation, snapshots and telemetry, and --accumulate',
      );
}

function overrides(o: Record<string, string | boolean | undefined>): Partial<TrainingSettings> {
  const out: Partial<TrainingSettings> = {};
  for (const [flag, key] of Object.entries(NUMERIC)) {
    if (o[flag] === undefined) continue;
    const n = Number(o[flag]);
    if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, got "${o[flag]}"`);
    const over = key in SETTING_LIMITS && overLimit(`--${flag}`, n, SETTING_LIMITS[key as keyof typeof SETTING_LIMITS]);
    if (over) throw new UsageError(over);
    out[key] = n;
  }
  if (typeof o['break-on'] === 'string') {
    const checks: Partial<Record<CheckName, 'break'>> = {};
    let names: string[];
    try {
      names = commaList(o['break-on'], '--break-on', CHECKS.slice(0, 2).join(','));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    for (const name of names) {
      if (!(CHECKS as readonly string[]).includes(name))
        throw new UsageError(`--break-on: unknown check "${name}" (expected ${CHECKS.join(', ')})`);
      checks[name as CheckName] = 'break';
    }
    out.checks = checks;
  }
  if (typeof o.watch === 'string') {
    out.watch = o.watch.split(';').map((w) => w.trim());
    if (out.watch.some((w) => !w))
      throw new UsageError(`--watch "${o.watch}": an empty condition (conditions are separated by ";")`);
  }
  return out;
}

export async function trainCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'train',
    'Trains a Transformer; progress on stderr, a JSON summary on stdout.',
    specs,
  );
  if (!options) return 0;
  if (!options.out) throw new UsageError('train: --out RUN is required');
  const minutes = numberOption(options['max-minutes'], 'max-minutes', Infinity, (n) => n > 0, 'a positive number');

  if (options.resume) checkResumeOptions(options);
  const changes = overrides(options);
  const fork = forkOption(options, NUMERIC, changes);
  if (options['gpu-memory'] !== undefined)
    process.env[GPU_MEMORY_ENV] = String(
      numberOption(
        options['gpu-memory'],
        'gpu-memory',
        0,
        (n) => n > 0 && Number.isFinite(n),
        'a positive number of GiB',
      ),
    );
  const backend = await initBackend(options.backend as string | undefined);
  const forked = fork ? createFork(fork) : undefined;
  const resume = options.resume === true || forked !== undefined;
  const opened = resume
    ? openRun(options.out as string, forked ? {} : changes)
    : prepareRun({
        out: options.out as string,
        data: dataSpec(options),
        config: (options.config as string) ?? 'tiny',
        overrides: changes,
      });
  const { run, config, settings, data } = opened;
  const pairs = changes.telemetry_pairs;
  const probe =
    pairs !== undefined && overLimit('--telemetry-pairs', pairs, telemetryPairsLimit(config, settings.max_length));
  if (probe) throw new UsageError(probe);
  const done = options.resume ? run.newestCheckpointStep() : undefined;
  if (changes.steps !== undefined && done !== undefined && changes.steps <= done)
    throw new UsageError(
      `train --resume: --steps ${changes.steps} is not past the run's step ${done}: --steps is the new total ` +
        `(to train N more steps, give ${done}+N, e.g. --steps ${done + 100})`,
    );
  const { trainer, from, warnings } = startTrainer(opened, { resume });
  const progress = new Progress(settings.steps, from);
  progress.message(`backend ${backend}; ${data.summary}`);
  for (const warning of warnings) progress.message(`warning: ${warning}`);
  progress.message(
    `${forked ? `fork of ${fork!.parent} at step ${from} (${describeFork(fork!.changes)}), ${run.path}` : options.resume ? `resuming ${run.path} at step ${from}` : `new run ${run.path}`}: d_model ${config.d_model}, ${config.heads} heads, ${config.encoder_layers}+${config.decoder_layers} layers, ${settings.steps} steps`,
  );
  let interrupts = 0;
  const onSignal = (): void => {
    if (++interrupts > 1) process.exit(130); // checkpoints are atomic: the newest complete one stays
    progress.message('stopping after this step, with a checkpoint (Ctrl-C again to quit at once)');
    trainer.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = Number.isFinite(minutes)
    ? setTimeout(() => {
        progress.message(`--max-minutes ${minutes} reached: stopping with a checkpoint`);
        trainer.stop();
      }, minutes * 60_000)
    : undefined;
  let last: { loss?: number; val_loss?: number; val_bleu?: number } = {};
  try {
    const step = await trainer.train({
      onFinding: (e) =>
        progress.message(`${e.severity === 'breakpoint' ? 'breakpoint' : 'warning'}: ${describeFinding(e)}`),
      onStep: (row) => {
        progress.update(row);
        last = {
          loss: row.loss,
          ...(row.val_loss !== undefined ? { val_loss: row.val_loss } : {}),
          ...(row.val_bleu !== undefined ? { val_bleu: row.val_bleu } : {}),
        };
      },
    });
    progress.end();
    const paused = trainer.breakpoint;
    if (paused)
      progress.message(
        `paused at step ${step} by ${paused.check}${paused.head ? ` (${paused.head})` : ''}; ` +
          `checkpoint written: resume with train --out ${run.path} --resume`,
      );
    const diverged = trainer.diverged;
    if (diverged && !paused) progress.message(`diverged at step ${step}: ${describeFinding(diverged)}`);
    process.stdout.write(
      `${JSON.stringify({ run: run.path, step, backend, ...last, checkpoint: run.weightsPath(step), stopped: step < settings.steps, ...(paused ? { breakpoint: paused } : {}), ...(diverged ? { diverged } : {}) })}\n`,
    );
    return paused ? 3 : diverged ? DIVERGED_EXIT : 0;
  } catch (err) {
    if (!(err instanceof GpuTrainingFailure)) throw err;
    progress.end();
    process.stderr.write(`attention-debugger: ${err.message}\n`);
    return GPU_FAILED_EXIT;
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    trainer.dispose();
  }
}
