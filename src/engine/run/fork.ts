/**
 * Forking a run: a new run folder that starts from one checkpoint of another (its weights, Adam's
 * moments, its step and data position) with some changes — heads frozen, masked (ξ = 0) or
 * re-initialised, another learning-rate factor or warmup, dropout or label smoothing. The fork
 * holds a copy of the parent's checkpoint at that step (re-initialised and masked heads already
 * applied), so training it is resuming it; its config.json records the parent, the step and the
 * changes (docs/RUN_FOLDER.md `fork`). Everything is read and checked before the folder is
 * created, whole, beside its final name (RunDir.createWhole).
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkFinite, checkTensors, listCheckpoints } from '../checkpoint';
import { readSafetensors, writeSafetensors } from '../checkpoint/safetensors';
import { describeForkChanges } from '../../protocol/fork';
import { RUN_FORMAT, RUN_FORMAT_VERSION } from '../../protocol/runFolder';
import { validateConfig } from '../model/config';
import { checkHeadIds, headElements } from '../model/headParams';
import { initialValue, parameterSpecs } from '../model/params';
import { RunDir } from './runDir';
import { writeFileAtomic } from '../io/atomicFile';
import { readRegularFile } from '../io/regularFile';
import { openRun } from './setup';
import { RESUME_FIELDS, type TrainingSettings, validateSettings } from './settings';

/** What a fork changes; every field is optional, the parent's value stays otherwise. */
export type ForkChanges = Partial<
  Pick<
    TrainingSettings,
    | 'freeze_heads'
    | 'mask_heads'
    | 'lr_factor'
    | 'warmup'
    | 'label_smoothing'
    | 'steps'
    | 'checkpoint_every'
    | 'eval_every'
    | 'snapshot_every'
    | 'telemetry_every'
    | 'telemetry_pairs'
    | 'bleu_sentences'
    | 'checks'
  >
> & { reinit_heads?: string[]; dropout?: number };

/** The settings a fork may change: the recipe's learning rate and regularisation, and what a resume may. */
export const FORK_SETTINGS: readonly string[] = [...RESUME_FIELDS, 'lr_factor', 'warmup', 'label_smoothing'];

export interface ForkSpec {
  parent: string;
  /** The parent's checkpoint to start from; its newest when absent. */
  step?: number;
  out: string;
  changes: ForkChanges;
}

/** `frozen cross:0.1; lr × 0.5`: a fork's changes as a person reads them (the extension's header says the same). */
export const describeFork = (changes: ForkChanges): string => describeForkChanges(changes);

/** The union of two head lists, in order, each once. */
const union = (a: string[] = [], b: string[] = []): string[] => [...new Set([...a, ...b])];

/** Sets the elements a mask marks to `value(i)`. */
function overwrite(data: Float32Array, owned: Uint8Array, value: (i: number) => number): void {
  for (let i = 0; i < owned.length; i++) if (owned[i]) data[i] = value(i);
}

/** Creates the fork's folder; returns the step it starts from. Nothing is written when a check fails. */
export function createFork(spec: ForkSpec): { step: number; out: string } {
  const parent = openRun(spec.parent);
  const run = parent.run;
  const steps = listCheckpoints(run.path).map((c) => c.step);
  if (!steps.length) throw new Error(`--fork ${spec.parent}: the run has no checkpoint to fork from`);
  const step = spec.step ?? steps[steps.length - 1]!;
  if (!steps.includes(step))
    throw new Error(`--fork ${spec.parent}@${step}: no checkpoint at step ${step}; it has steps ${steps.join(', ')}`);
  const out = new RunDir(spec.out);
  if (out.exists()) throw new Error(`--out ${spec.out}: already holds a run; choose another --out`);

  const { dropout, reinit_heads, ...settingChanges } = spec.changes;
  for (const key of Object.keys(settingChanges))
    if (!['freeze_heads', 'mask_heads', ...FORK_SETTINGS].includes(key))
      throw new Error(`--fork: ${key} cannot change in a fork (it may change ${FORK_SETTINGS.join(', ')})`);
  const config = validateConfig({ ...parent.config, ...(dropout !== undefined ? { dropout } : {}) }, '--dropout');
  const settings: TrainingSettings = validateSettings(
    {
      ...parent.settings,
      ...settingChanges,
      freeze_heads: union(parent.settings.freeze_heads, spec.changes.freeze_heads),
      mask_heads: union(parent.settings.mask_heads, spec.changes.mask_heads),
    },
    '--fork',
  );
  if (settings.steps <= step)
    throw new Error(
      `--steps: the fork starts at step ${step} and would train to ${settings.steps}; give a total past ${step}, ` +
        `e.g. --steps ${step + 100}`,
    );
  const refs = {
    freeze: checkHeadIds(config, spec.changes.freeze_heads ?? [], '--freeze-heads'),
    mask: checkHeadIds(config, spec.changes.mask_heads ?? [], '--mask-heads'),
    reinit: checkHeadIds(config, reinit_heads ?? [], '--reinit-heads'),
  };

  const weightsPath = run.weightsPath(step);
  const weights = readSafetensors(weightsPath);
  checkTensors(config, weights.tensors, weightsPath, run.configPath);
  checkFinite(weights.tensors, weightsPath);
  const optimPath = run.optimPath(step);
  const optim = existsSync(optimPath) ? readSafetensors(optimPath) : undefined;
  if (optim) checkFinite(optim.tensors, optimPath);

  // Re-initialised heads: fresh values as a new run draws them (seeded by the run's seed and the
  // step), biases 0; their moments start from zero, as do those of every changed head.
  const specs = new Map(parameterSpecs(config).map((s, i) => [s.name, { spec: s, index: i }]));
  for (const [name, owned] of headElements(config, refs.reinit, 'all')) {
    const t = weights.tensors.get(name)!;
    const { spec: ps, index } = specs.get(name)!;
    const fresh = tf.tidy(() => initialValue(ps, config.d_model, settings.seed * 1000 + index + step * 7919));
    const values = fresh.dataSync() as Float32Array;
    fresh.dispose();
    overwrite(t.data, owned, (i) => values[i]!);
  }
  for (const [name, owned] of headElements(config, refs.mask, 'output'))
    overwrite(weights.tensors.get(name)!.data, owned, () => 0);
  const changed = [...refs.freeze, ...refs.mask, ...refs.reinit];
  for (const [name, owned] of headElements(config, changed, 'all'))
    for (const moment of ['exp_avg', 'exp_avg_sq']) {
      const m = optim?.tensors.get(`${name}.${moment}`);
      if (m) overwrite(m.data, owned, () => 0);
    }

  const { raw } = run.readConfig();
  const record = { parent: resolve(run.path), step, changes: spec.changes };
  RunDir.createWhole(spec.out, (staged) => {
    if (existsSync(run.vocabPath)) writeFileAtomic(staged.vocabPath, [readRegularFile(run.vocabPath, 'json')]);
    staged.writeConfig({
      ...raw,
      ...config,
      run_format: RUN_FORMAT,
      run_format_version: RUN_FORMAT_VERSION,
      writer: 'engine',
      training: settings,
      data: parent.dataSpec,
      fork: record,
    });
    if (optim) writeSafetensors(staged.optimPath(step), optim.tensors, optim.metadata);
    writeSafetensors(staged.weightsPath(step), weights.tensors, weights.metadata);
  });
  return { step, out: spec.out };
}
