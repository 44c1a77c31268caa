/**
 * Checkpoints: `<dir>/config.json` beside safetensors files named as PyTorch's nn.Transformer
 * state_dict names them (params.ts). Loads checkpoints PyTorch wrote in this layout and our own.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { modelFields, validateConfig, type TransformerConfig } from '../model/config';
import { parameterSpecs, SHARED_NAMES, uniqueVariables, variablePrefix, type Params } from '../model/params';
import { Transformer } from '../model/transformer';
import { CHECKPOINT_FILE, RUN_FILES, stepOf } from '../../protocol/runFolder';
import { writeFileAtomic } from '../io/atomicFile';
import { readSafetensors, writeSafetensors, type NamedTensor } from './safetensors';
import { readJsonFile } from '../io/json';
import { FileRefused, folderEntries, kindOf, linkNote } from '../io/regularFile';

export function readConfig(path: string): TransformerConfig {
  return validateConfig(readJsonFile(path), path);
}

/** The checkpoints of a run folder (`checkpoints/step-N.safetensors`), oldest first. */
export function listCheckpoints(runDir: string): { step: number; path: string }[] {
  const dir = join(runDir, RUN_FILES.checkpoints);
  return folderEntries(dir)
    .map((f) => ({ step: stepOf(CHECKPOINT_FILE, f) ?? -1, path: join(dir, f) }))
    .filter((c) => c.step >= 0)
    .sort((a, b) => a.step - b.step);
}

/** The training step of a checkpoint file, from its name (`step-N.safetensors`); 0 when it has none. */
export function checkpointStep(weightsPath: string): number {
  return stepOf(CHECKPOINT_FILE, basename(weightsPath)) ?? 0;
}

/**
 * Resolves what a user named: a .safetensors file (config.json beside it or one folder up, as in a
 * run folder), a folder with config.json and model.safetensors, or a run folder (its newest checkpoint).
 */
export function resolveCheckpoint(path: string): { configPath: string; weightsPath: string } {
  if (!existsSync(path)) throw new Error(`${path}: no such file or folder`);
  const s = statSync(path);
  if (!s.isFile() && !s.isDirectory())
    throw new FileRefused(
      path,
      `${linkNote(path)}: ${kindOf(s)}, not a regular file nor a folder; name a .safetensors file or a folder`,
    );
  if (s.isFile()) {
    const near = [join(dirname(path), 'config.json'), join(dirname(path), '..', 'config.json')].find(existsSync);
    if (!near) throw new Error(`${path}: no config.json beside it or in its parent folder`);
    return { configPath: near, weightsPath: path };
  }
  const configPath = join(path, 'config.json');
  if (!existsSync(configPath)) throw new Error(`${path}: no config.json in this folder`);
  if (existsSync(join(path, 'model.safetensors'))) return { configPath, weightsPath: join(path, 'model.safetensors') };
  const newest = listCheckpoints(path).pop();
  if (!newest) throw new Error(`${path}: no model.safetensors and no checkpoints/step-N.safetensors`);
  return { configPath, weightsPath: newest.path };
}

/**
 * Refuses a tensor with a NaN or an infinity, naming it: a diverged or damaged checkpoint would
 * otherwise decode into nothing (`null` scores) or train on from garbage. Decoding (runCheckpoint)
 * and resuming check it; loadCheckpoint does not, so that a broken checkpoint can still be inspected.
 */
export function checkFinite(tensors: Map<string, NamedTensor>, source: string): void {
  const bad = firstNonFinite(tensors);
  if (bad) throw new Error(`${source}: tensor "${bad.name}" ${bad.message}`);
}

/** The first NaN or infinity of a checkpoint's tensors, with what checkFinite and check-run say of it. */
export function firstNonFinite(tensors: Map<string, NamedTensor>): { name: string; message: string } | undefined {
  for (const [name, t] of tensors) {
    const i = t.data.findIndex((x) => !Number.isFinite(x));
    if (i >= 0)
      return {
        name,
        message:
          `holds ${t.data[i]} at index ${i} of ${t.data.length}: the checkpoint is broken (a diverged or ` +
          'damaged run); use an earlier checkpoint',
      };
  }
  return undefined;
}

/**
 * Checks a checkpoint's tensors against a config (names and shapes); errors name the tensor and
 * both shapes. `against` names the config in the message.
 */
export function checkTensors(
  config: TransformerConfig,
  tensors: Map<string, NamedTensor>,
  source: string,
  against = 'its config.json',
): void {
  const specs = parameterSpecs(config);
  const problems: string[] = [];
  for (const spec of specs) {
    const t = tensors.get(spec.name);
    const optional = config.share_embeddings && SHARED_NAMES.includes(spec.name);
    if (!t) {
      if (!optional) problems.push(`missing tensor "${spec.name}" [${spec.shape}]`);
    } else if (t.shape.join(',') !== spec.shape.join(',')) {
      problems.push(`tensor "${spec.name}" has shape [${t.shape}], config expects [${spec.shape}]`);
    }
  }
  const known = new Set(specs.map((s) => s.name));
  const extra = [...tensors.keys()].filter((n) => !known.has(n));
  if (extra.length)
    problems.push(
      `unexpected tensors for this config: ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ', …' : ''}`,
    );
  if (problems.length) throw new Error(`${source}: does not match ${against}:\n  ${problems.join('\n  ')}`);
}

/** Checks the file's tensors against the config (checkTensors) and makes Variables. */
export function paramsFromTensors(
  config: TransformerConfig,
  tensors: Map<string, NamedTensor>,
  source: string,
  against?: string,
): Params {
  checkTensors(config, tensors, source, against);
  return variablesOf(config, tensors);
}

/** Variables of checked tensors; shared names point at one Variable. */
function variablesOf(config: TransformerConfig, tensors: Map<string, NamedTensor>): Params {
  const specs = parameterSpecs(config);
  const params: Params = new Map();
  const prefix = variablePrefix();
  for (const spec of specs) {
    if (config.share_embeddings && SHARED_NAMES.includes(spec.name)) {
      params.set(spec.name, params.get('src_embed.weight')!);
      continue;
    }
    const t = tensors.get(spec.name)!;
    params.set(
      spec.name,
      tf.tidy(() => tf.variable(tf.tensor(t.data, t.shape), true, prefix + spec.name)),
    );
  }
  return params;
}

/** The model of a checkpoint; `finite` refuses one holding a NaN or an infinity (checkFinite). */
export function loadCheckpoint(path: string, finite = false): Transformer {
  const { configPath, weightsPath } = resolveCheckpoint(path);
  const config = readConfig(configPath);
  const { tensors } = readSafetensors(weightsPath);
  if (finite) checkFinite(tensors, weightsPath);
  return new Transformer(config, paramsFromTensors(config, tensors, weightsPath));
}

/** The vocab.json of the run or checkpoint folder a weights file belongs to (where its config.json is), if any. */
function vocabularyNear(weightsPath: string): string | undefined {
  const dir = [dirname(weightsPath), join(dirname(weightsPath), '..')].find((d) =>
    existsSync(join(d, RUN_FILES.config)),
  );
  return dir && existsSync(join(dir, RUN_FILES.vocab)) ? join(dir, RUN_FILES.vocab) : undefined;
}

/** Whether two JSON files hold the same value; false when one is not JSON, refused when one is not a regular file. */
function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(readJsonFile(a)) === JSON.stringify(readJsonFile(b));
  } catch (err) {
    if (err instanceof FileRefused) throw err;
    return false;
  }
}

/**
 * A checkpoint for a run, checked against the run before use: the newest checkpoint of the run, or
 * `checkpoint` (a .safetensors file such as an average, or a folder). Its tensors must match the
 * run's own config.json and be finite, the run's vocabulary (of `vocabSize` tokens) must match that config, and a
 * checkpoint that sits in another run with another vocabulary is refused: decoding it with this
 * run's vocabulary would print nonsense.
 */
export function runCheckpoint(
  runPath: string,
  checkpoint: string | undefined,
  vocabSize: number,
): { config: TransformerConfig; configPath: string; weightsPath: string; tensors: Map<string, NamedTensor> } {
  const configPath = join(runPath, RUN_FILES.config);
  const config = readConfig(configPath);
  const vocabPath = join(runPath, RUN_FILES.vocab);
  if (vocabSize !== config.src_vocab || vocabSize !== config.tgt_vocab)
    throw new Error(
      `${vocabPath}: ${vocabSize} tokens, but ${configPath} says src_vocab ${config.src_vocab} and tgt_vocab ` +
        `${config.tgt_vocab}: the vocabulary is not this run's`,
    );
  const weightsPath =
    checkpoint !== undefined && existsSync(checkpoint) && statSync(checkpoint).isFile()
      ? checkpoint
      : resolveCheckpoint(checkpoint ?? runPath).weightsPath;
  const { tensors } = readSafetensors(weightsPath);
  checkTensors(config, tensors, weightsPath, `the run's ${configPath} (a checkpoint of another run or vocabulary?)`);
  checkFinite(tensors, weightsPath);
  const theirs = vocabularyNear(weightsPath);
  if (theirs && existsSync(vocabPath) && !sameJson(theirs, vocabPath))
    throw new Error(
      `${weightsPath}: a checkpoint of another vocabulary (${theirs} differs from ${vocabPath}); ` +
        `decode it with its own run, or give a checkpoint of ${runPath}`,
    );
  return { config, configPath, weightsPath, tensors };
}

/** The model of a run at a checkpoint, checked as runCheckpoint checks it. */
export function loadRunCheckpoint(
  runPath: string,
  checkpoint: string | undefined,
  vocabSize: number,
): { model: Transformer; weightsPath: string } {
  const { config, weightsPath, tensors } = runCheckpoint(runPath, checkpoint, vocabSize);
  return { model: new Transformer(config, variablesOf(config, tensors)), weightsPath };
}

/** Reads every parameter (shared ones under each of their names, as PyTorch's state_dict does). */
export async function tensorsOf(params: Params): Promise<Map<string, NamedTensor>> {
  const values = new Map<tf.Variable, Float32Array>();
  for (const v of uniqueVariables(params)) values.set(v, (await v.data()) as Float32Array);
  return new Map([...params].map(([name, v]) => [name, { shape: v.shape, data: values.get(v)! }]));
}

/** Writes the weights (atomically) and, when `configPath` is given, config.json beside them. */
export async function saveCheckpoint(
  model: Transformer,
  weightsPath: string,
  configPath?: string,
  extraConfig: object = {},
): Promise<void> {
  writeSafetensors(weightsPath, await tensorsOf(model.params));
  if (configPath)
    writeFileAtomic(configPath, [
      Buffer.from(`${JSON.stringify({ ...modelFields(model.config), ...extraConfig }, null, 2)}\n`),
    ]);
}
