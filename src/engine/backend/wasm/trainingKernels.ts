/**
 * The wasm kernels of the training ops with gradients (backend/trainingOps.ts, which names them,
 * runs them and registers their gradients), over the native addon (native/attention.c, norm.c and
 * blas.c's linear backward): each reads and writes the wasm heap in place.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { type InferenceAddon, addLayerNormKernel } from './inferenceKernels';
import { linearRows } from '../inferenceOps';
import { addKernel, f32, type KernelFunc, product, type WasmBackend } from '../kernels';
import {
  ATTENTION_GRAD,
  attentionSizes,
  CROSS_ATTENTION,
  DROPOUT,
  DROPOUT_ADD_NORM,
  LAYER_NORM,
  LINEAR_GRAD,
  NORM_GRAD,
  registerTrainingGradients,
  SELF_ATTENTION,
} from '../trainingOps';

export interface TrainingAddon {
  dropout(x: Float32Array, y: Float32Array, n: number, rate: number, seed: number): void;
  linearBackward(
    dy: Float32Array,
    x: Float32Array,
    w: Float32Array,
    y: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    db: Float32Array,
    n: number,
    inDim: number,
    outDim: number,
    relu: boolean,
  ): void;
  addLayerNormBackward(
    dy: Float32Array,
    x: Float32Array,
    r: Float32Array,
    gain: Float32Array,
    dx: Float32Array,
    dr: Float32Array,
    dgain: Float32Array,
    dbias: Float32Array,
    n: number,
    d: number,
    eps: number,
    residual: boolean,
    rate: number,
    seed: number,
  ): void;
  attention(q: Float32Array, kv: Float32Array, mask: Float32Array, out: Float32Array, dims: number[]): void;
  attentionBackward(
    dout: Float32Array,
    q: Float32Array,
    kv: Float32Array,
    mask: Float32Array,
    dq: Float32Array,
    dkv: Float32Array,
    dims: number[],
  ): void;
}

/** x → x ⊙ m; attrs.rate, attrs.seed */
function dropoutKernel(ops: TrainingAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x } = inputs as { x: tf.TensorInfo };
    const { rate, seed } = attrs as { rate: number; seed: number };
    const be = backend as WasmBackend;
    const y = be.makeOutput(x.shape, 'float32');
    ops.dropout(f32(be, x), f32(be, y), product(x.shape), rate, seed);
    return y;
  };
}

/** dy, x, w, y of LINEAR → dx, dW (zero outside attrs.rows), db */
function linearGradKernel(ops: TrainingAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { dy, x, w, y } = inputs as Record<'dy' | 'x' | 'w' | 'y', tf.TensorInfo>;
    const { relu, rows } = attrs as { relu: boolean; rows: [number, number] };
    const inDim = x.shape[x.shape.length - 1]!;
    const [from, outDim] = linearRows(w, undefined, rows);
    const be = backend as WasmBackend;
    const outs = [be.makeOutput(x.shape, 'float32'), be.makeOutput(w.shape, 'float32')];
    outs.push(be.makeOutput([w.shape[0]!], 'float32'));
    const [dx, dw, db] = outs.map((o) => f32(be, o)); // views after every makeOutput (the heap may grow)
    if (outDim < w.shape[0]!) {
      dw!.fill(0);
      db!.fill(0);
    }
    const block = (a: Float32Array, width: number) => a.subarray(from * width, (from + outDim) * width);
    ops.linearBackward(
      f32(be, dy),
      f32(be, x),
      block(f32(be, w), inDim),
      f32(be, y),
      dx!,
      block(dw!, inDim),
      block(db!, 1),
      product(x.shape.slice(0, -1)),
      inDim,
      outDim,
      relu,
    );
    return outs;
  };
}

interface NormAttrs {
  eps: number;
  rate: number;
  seed: number;
}

/** dy, x, r (DROPOUT_ADD_NORM; absent for LAYER_NORM), gain → dx, dgain, dbias, and dr with r */
function normGradKernel(ops: TrainingAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { dy, x, r, gain } = inputs as Record<'dy' | 'x' | 'gain', tf.TensorInfo> & { r?: tf.TensorInfo };
    const { eps, rate = 0, seed = 0 } = attrs as unknown as Partial<NormAttrs> & { eps: number };
    const be = backend as WasmBackend;
    const outs = [x, gain, gain, ...(r ? [r] : [])].map((t) => be.makeOutput(t.shape, 'float32'));
    const [dx, dgain, dbias, dr] = outs.map((o) => f32(be, o)); // views after every makeOutput
    const d = x.shape[x.shape.length - 1]!;
    const [n, dyv, xv, gv] = [product(x.shape) / d, f32(be, dy), f32(be, x), f32(be, gain)];
    const rv = r ? f32(be, r) : xv;
    ops.addLayerNormBackward(dyv, xv, rv, gv, dx!, dr ?? dx!, dgain!, dbias!, n, d, eps, !!r, rate, seed);
    return outs;
  };
}

/** The native dims (native/attention.c) of an attention call. */
function attentionDims(q: tf.TensorInfo, kv: tf.TensorInfo | undefined, mask: tf.TensorInfo, h: number) {
  const z = attentionSizes(q, kv, mask, h);
  const dims = [z.b, z.t, z.s, h, z.dk, z.qWidth, 0, z.kvWidth, z.kOffset, z.vOffset, z.maskB, z.maskT, 1];
  return { b: z.b, t: z.t, d: z.d, dims };
}

type AttentionInputs = { q: tf.TensorInfo; kv?: tf.TensorInfo; mask: tf.TensorInfo };

/** SELF_ATTENTION (q = Q, K, V [B, T, 3d], mask) or CROSS_ATTENTION (q [B, T, d], kv = K, V [B, S, 2d], mask) → [B, T, d] */
function attentionKernel(ops: TrainingAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { q, kv, mask } = inputs as AttentionInputs;
    const { b, t, d, dims } = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
    const be = backend as WasmBackend;
    const out = be.makeOutput([b, t, d], 'float32');
    const qv = f32(be, q);
    ops.attention(qv, kv ? f32(be, kv) : qv, f32(be, mask), f32(be, out), dims);
    return out;
  };
}

/** dy and the inputs of SELF_ATTENTION or CROSS_ATTENTION → dq, and dkv for cross-attention */
function attentionGradKernel(ops: TrainingAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { dy, q, kv, mask } = inputs as AttentionInputs & { dy: tf.TensorInfo };
    const { dims } = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
    const be = backend as WasmBackend;
    const outs = [q, ...(kv ? [kv] : [])].map((t) => be.makeOutput(t.shape, 'float32'));
    const [dq, dkv] = outs.map((o) => f32(be, o)); // views after every makeOutput
    const qv = f32(be, q);
    const kvv = kv ? f32(be, kv) : qv;
    ops.attentionBackward(f32(be, dy), qv, kvv, f32(be, mask), dq!, dkv ?? dq!, dims);
    return outs;
  };
}

/** Idempotent; after tfjs-backend-wasm is loaded. */
export function registerTrainingKernels(ops: TrainingAddon & InferenceAddon): void {
  addKernel(DROPOUT, 'wasm', dropoutKernel(ops));
  addKernel(LINEAR_GRAD, 'wasm', linearGradKernel(ops));
  addKernel(DROPOUT_ADD_NORM, 'wasm', addLayerNormKernel(ops));
  addKernel(LAYER_NORM, 'wasm', addLayerNormKernel(ops));
  addKernel(NORM_GRAD, 'wasm', normGradKernel(ops));
  addKernel(SELF_ATTENTION, 'wasm', attentionKernel(ops));
  addKernel(CROSS_ATTENTION, 'wasm', attentionKernel(ops));
  addKernel(ATTENTION_GRAD, 'wasm', attentionGradKernel(ops));
  registerTrainingGradients();
}
