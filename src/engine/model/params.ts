/**
 * The model's parameters, named as PyTorch's nn.Transformer state_dict names them (so that a
 * checkpoint loads with safetensors.torch.load_file), with their shapes and initialisation; and
 * resolveLayers, which turns those names once into the typed record the model code reads
 * (TransformerLayers), so that the PyTorch names stay here and at the checkpoint files.
 * Linear weights are [out, in] as in PyTorch: y = x·Wᵀ + b.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { TransformerConfig } from './config';

/** Every parameter by its PyTorch state_dict name: what checkpoints and the optimizer's state hold. */
export type Params = Map<string, tf.Variable>;

/** A linear map y = x·Wᵀ + b, W [out, in] as PyTorch stores it. */
export interface LinearParams {
  w: tf.Tensor;
  b: tf.Tensor;
}

/**
 * One multi-head attention (§3.2.2). W^Q, W^K, W^V [d, d] are stacked in one [3d, d] matrix, and
 * their biases in one [3d] vector, as PyTorch's in_proj_weight and in_proj_bias hold them; the
 * model slices them where it projects (attention.ts), or once for decoding (`sliced`).
 */
export interface AttentionParams {
  /** [W^Q; W^K; W^V], [3d, d] (in_proj_weight). */
  wQKV: tf.Tensor;
  /** [b^Q; b^K; b^V], [3d] (in_proj_bias). */
  bQKV: tf.Tensor;
  /** W^O [d, d] (out_proj.weight). */
  wO: tf.Tensor;
  /** W^O's bias [d] (out_proj.bias). */
  bO: tf.Tensor;
  /** W^Q, W^K, W^V and their biases already sliced from wQKV, bQKV (see slicedProjections). */
  sliced?: { q: LinearParams; k: LinearParams; v: LinearParams };
}

/** FFN(x) = max(0, x·W1 + b1)·W2 + b2 (eq. 2): W1 [d_ff, d] (linear1), W2 [d, d_ff] (linear2). */
export interface FeedForwardParams {
  w1: tf.Tensor;
  b1: tf.Tensor;
  w2: tf.Tensor;
  b2: tf.Tensor;
}

/** LayerNorm's gain γ and bias β, [d] each. */
export interface NormParams {
  gain: tf.Tensor;
  bias: tf.Tensor;
}

/** One encoder layer (§3.1): self-attention, then the FFN, each with its LayerNorm. */
export interface EncoderLayerParams {
  selfAttn: AttentionParams;
  ffn: FeedForwardParams;
  norm1: NormParams;
  norm2: NormParams;
}

/** One decoder layer (§3.1): masked self-attention, attention over the encoder's output, the FFN. */
export interface DecoderLayerParams {
  selfAttn: AttentionParams;
  /** Encoder-decoder attention (PyTorch's multihead_attn). */
  crossAttn: AttentionParams;
  ffn: FeedForwardParams;
  norm1: NormParams;
  norm2: NormParams;
  norm3: NormParams;
}

/**
 * The whole model as Figure 1 draws it. Shared embeddings (§3.4) are one tensor under three
 * fields; `encoderNorm`/`decoderNorm` exist with final_norm, `positions` with learned positions.
 */
export interface TransformerLayers {
  /** Source token embeddings [src_vocab, d]. */
  srcEmbed: tf.Tensor;
  /** Target token embeddings [tgt_vocab, d]. */
  tgtEmbed: tf.Tensor;
  /** Learned positional embeddings [max_len, d] of each side (§3.5's alternative to sinusoids). */
  positions?: { encoder: tf.Tensor; decoder: tf.Tensor };
  encoder: EncoderLayerParams[];
  encoderNorm?: NormParams;
  decoder: DecoderLayerParams[];
  decoderNorm?: NormParams;
  /** The pre-softmax linear map [tgt_vocab, d] and its bias [tgt_vocab]. */
  generator: LinearParams;
}
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

/** A parameter's initial value, as a new model draws it for this seed. */
export function initialValue(spec: ParamSpec, d: number, seed: number): tf.Tensor {
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
    const value = initialValue(spec, c.d_model, seed * 1000 + i);
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

/**
 * The typed record of a model's parameters, resolved once from their PyTorch names (the tensors
 * are the same Variables: training and loading a checkpoint update both views).
 */
export function resolveLayers(c: TransformerConfig, params: Params): TransformerLayers {
  const get = (name: string): tf.Variable => {
    const v = params.get(name);
    if (!v) throw new Error(`the model has no parameter "${name}"`);
    return v;
  };
  const linear = (p: string): LinearParams => ({ w: get(`${p}.weight`), b: get(`${p}.bias`) });
  const norm = (p: string): NormParams => ({ gain: get(`${p}.weight`), bias: get(`${p}.bias`) });
  const attention = (p: string): AttentionParams => ({
    wQKV: get(`${p}.in_proj_weight`),
    bQKV: get(`${p}.in_proj_bias`),
    wO: get(`${p}.out_proj.weight`),
    bO: get(`${p}.out_proj.bias`),
  });
  const ffn = (p: string): FeedForwardParams => {
    const [l1, l2] = [linear(`${p}.linear1`), linear(`${p}.linear2`)];
    return { w1: l1.w, b1: l1.b, w2: l2.w, b2: l2.b };
  };
  const encoder = Array.from({ length: c.encoder_layers }, (_, i): EncoderLayerParams => {
    const p = `encoder.layers.${i}`;
    return { selfAttn: attention(`${p}.self_attn`), ffn: ffn(p), norm1: norm(`${p}.norm1`), norm2: norm(`${p}.norm2`) };
  });
  const decoder = Array.from({ length: c.decoder_layers }, (_, i): DecoderLayerParams => {
    const p = `decoder.layers.${i}`;
    return {
      selfAttn: attention(`${p}.self_attn`),
      crossAttn: attention(`${p}.multihead_attn`),
      ffn: ffn(p),
      norm1: norm(`${p}.norm1`),
      norm2: norm(`${p}.norm2`),
      norm3: norm(`${p}.norm3`),
    };
  });
  return {
    srcEmbed: get('src_embed.weight'),
    tgtEmbed: get('tgt_embed.weight'),
    ...(c.positional === 'learned'
      ? { positions: { encoder: get('encoder.pos_embed.weight'), decoder: get('decoder.pos_embed.weight') } }
      : {}),
    encoder,
    ...(c.final_norm ? { encoderNorm: norm('encoder.norm') } : {}),
    decoder,
    ...(c.final_norm ? { decoderNorm: norm('decoder.norm') } : {}),
    generator: linear('generator'),
  };
}
