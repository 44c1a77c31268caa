/**
 * Checkpoints: `<dir>/config.json` beside safetensors files named as PyTorch's nn.Transformer
 * state_dict names them (params.ts). Loads checkpoints PyTorch wrote in this layout and our own.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { modelFields, validateConfig, type TransformerConfig } from '../model/config';
import { parameterSpecs, SHARED_NAMES, uniqueVariables, variablePrefix, type Params } from '../model/params';
import { Transformer } from '../model/transformer';
import { CHECKPOINT_FILE, RUN_FILES, stepOf } from '../../protocol/runFolder';
import { writeFileAtomic } from '../io/atomicFile';
import { readSafetensors, writeSafetensors, type NamedTensor } from './safetensors';

export function readConfig(path: string): TransformerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(
      `${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : `not valid JSON (${(err as Error).message})`}`,
    );
  }
  return validateConfig(raw, path);
}

/** The checkpoints of a run folder (`checkpoints/step-N.safetensors`), oldest first. */
export function listCheckpoints(runDir: string): { step: number; path: string }[] {
  const dir = join(runDir, RUN_FILES.checkpoints);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
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
  if (statSync(path).isFile()) {
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

/** Checks the file's tensors against the config and makes Variables; errors name tensor and shape. */
export function paramsFromTensors(
  config: TransformerConfig,
  tensors: Map<string, NamedTensor>,
  source: string,
): Params {
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
  if (problems.length) throw new Error(`${source}: does not match its config.json:\n  ${problems.join('\n  ')}`);
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

export function loadCheckpoint(path: string): Transformer {
  const { configPath, weightsPath } = resolveCheckpoint(path);
  const config = readConfig(configPath);
  const { tensors } = readSafetensors(weightsPath);
  return new Transformer(config, paramsFromTensors(config, tensors, weightsPath));
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
