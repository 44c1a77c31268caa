/**
 * The model's parameters, named as PyTorch's nn.Transformer state_dict names them (so that a
 * checkpoint loads with safetensors.torch.load_file), with their shapes and initialisation.
 * Linear weights are [out, in] as in PyTorch: y = x·Wᵀ + b.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { TransformerConfig } from './config';

export type Params = Map<string, tf.Variable>;
type Kind = 'weight' | 'bias' | 'norm_gain' | 'norm_bias' | 'embedding';
export interface ParamSpec {
  name: string;
  shape: number[];
  kind: Kind;
}

function attentionSpecs(prefix: string, d: number): ParamSpec[] {
  return [
    { name: `${prefix}.in_proj_weight`, shape: [3 * d, d], kind: 'weight' }, // W^Q, W^K, W^V stacked
    { name: `${prefix}.in_proj_bias`, shape: [3 * d], kind: 'bias' },
    { name: `${prefix}.out_proj.weight`, shape: [d, d], kind: 'weight' }, // W^O
    { name: `${prefix}.out_proj.bias`, shape: [d], kind: 'bias' },
  ];
}

function normSpecs(prefix: string, d: number): ParamSpec[] {
  return [
    { name: `${prefix}.weight`, shape: [d], kind: 'norm_gain' },
    { name: `${prefix}.bias`, shape: [d], kind: 'norm_bias' },
  ];
}

function ffnSpecs(prefix: string, d: number, dff: number): ParamSpec[] {
  return [
    { name: `${prefix}.linear1.weight`, shape: [dff, d], kind: 'weight' },
    { name: `${prefix}.linear1.bias`, shape: [dff], kind: 'bias' },
    { name: `${prefix}.linear2.weight`, shape: [d, dff], kind: 'weight' },
    { name: `${prefix}.linear2.bias`, shape: [d], kind: 'bias' },
  ];
}

/** Every tensor a checkpoint of this config holds, in a stable order. */
export function parameterSpecs(c: TransformerConfig): ParamSpec[] {
  const d = c.d_model;
  const specs: ParamSpec[] = [];
  for (let i = 0; i < c.encoder_layers; i++) {
    const p = `encoder.layers.${i}`;
    specs.push(
      ...attentionSpecs(`${p}.self_attn`, d),
      ...ffnSpecs(p, d, c.d_ff),
      ...normSpecs(`${p}.norm1`, d),
      ...normSpecs(`${p}.norm2`, d),
    );
  }
  if (c.final_norm) specs.push(...normSpecs('encoder.norm', d));
  for (let i = 0; i < c.decoder_layers; i++) {
    const p = `decoder.layers.${i}`;
    specs.push(
      ...attentionSpecs(`${p}.self_attn`, d),
      ...attentionSpecs(`${p}.multihead_attn`, d),
      ...ffnSpecs(p, d, c.d_ff),
    );
    specs.push(...normSpecs(`${p}.norm1`, d), ...normSpecs(`${p}.norm2`, d), ...normSpecs(`${p}.norm3`, d));
  }
  if (c.final_norm) specs.push(...normSpecs('decoder.norm', d));
  specs.push({ name: 'src_embed.weight', shape: [c.src_vocab, d], kind: 'embedding' });
  specs.push({ name: 'tgt_embed.weight', shape: [c.tgt_vocab, d], kind: 'embedding' });
  specs.push({ name: 'generator.weight', shape: [c.tgt_vocab, d], kind: 'embedding' });
  specs.push({ name: 'generator.bias', shape: [c.tgt_vocab], kind: 'bias' });
  if (c.positional === 'learned') {
    specs.push({ name: 'encoder.pos_embed.weight', shape: [c.max_len, d], kind: 'embedding' });
    specs.push({ name: 'decoder.pos_embed.weight', shape: [c.max_len, d], kind: 'embedding' });
  }
  return specs;
}

/** Names that alias src_embed.weight when embeddings are shared (§3.4). */
export const SHARED_NAMES = ['tgt_embed.weight', 'generator.weight'];

function initValue(spec: ParamSpec, d: number, seed: number): tf.Tensor {
  switch (spec.kind) {
    case 'bias':
    case 'norm_bias':
      return tf.zeros(spec.shape);
    case 'norm_gain':
      return tf.ones(spec.shape);
    case 'embedding': // N(0, d^-0.5): scaled by √d_model on lookup, the sum has unit variance
      return tf.randomNormal(spec.shape, 0, d ** -0.5, 'float32', seed);
    case 'weight': {
      // Xavier/Glorot uniform, as the Annotated Transformer initialises; in_proj counts each of Q, K, V.
      const fanOut = spec.name.endsWith('in_proj_weight') ? spec.shape[1] : spec.shape[0];
      const limit = Math.sqrt(6 / (fanOut + spec.shape[1]));
      return tf.randomUniform(spec.shape, -limit, limit, 'float32', seed);
    }
  }
}

let instances = 0;
/** tfjs variable names are global to the process: prefix them per model so that two models can coexist. */
export function variablePrefix(): string {
  return `m${++instances}/`;
}

/** Fresh parameters (deterministic for a seed); shared names point at one Variable. */
export function initParams(c: TransformerConfig, seed = 1): Params {
  const params: Params = new Map();
  const prefix = variablePrefix();
  parameterSpecs(c).forEach((spec, i) => {
    if (c.share_embeddings && SHARED_NAMES.includes(spec.name)) {
      params.set(spec.name, params.get('src_embed.weight')!);
      return;
    }
    const value = initValue(spec, c.d_model, seed * 1000 + i);
    params.set(spec.name, tf.variable(value, true, prefix + spec.name));
    value.dispose();
  });
  return params;
}

/** The distinct variables (shared ones once). */
export function uniqueVariables(params: Params): tf.Variable[] {
  return [...new Set(params.values())];
}

/** The distinct variables with the first parameter name each goes by. */
export function namedVariables(params: Params): [string, tf.Variable][] {
  const seen = new Set<tf.Variable>();
  return [...params].filter(([, v]) => !seen.has(v) && seen.add(v));
}

export function disposeParams(params: Params): void {
  for (const v of uniqueVariables(params)) v.dispose();
}
