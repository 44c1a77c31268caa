/**
 * What the block kernels (dropout.ts, layerNorm.ts, linear.ts) share on tfjs-backend-webgpu: a WGSL
 * program in tfjs's WebGPUProgram form (tfjs adds the bindings, the shape uniforms and `_start`; we
 * write `main`), tfjs's own kernels called from inside ours (its tuned matMul, reshape as a view,
 * slice), and the dropout draw of native/norm.c in WGSL. Only types come from tfjs-backend-webgpu
 * here: its kernels are looked up in tfjs's registry once Dawn has loaded it (index.ts loads it late).
 */
import * as tf from '@tensorflow/tfjs-core';
import { type KernelFunc, product } from '../kernels';

/** What these kernels use of tfjs-backend-webgpu's WebGPUBackend. */
export type WebgpuBackend = tf.KernelBackend & {
  runWebGPUProgram(
    program: WebgpuProgram,
    inputs: tf.TensorInfo[],
    dtype: tf.DataType,
    uniforms?: ProgramUniform[],
    output?: tf.TensorInfo,
  ): tf.TensorInfo;
  makeTensorInfo(shape: number[], dtype: tf.DataType, values?: tf.backend_util.BackendValues): tf.TensorInfo;
  disposeData(dataId: tf.DataId, force?: boolean): boolean;
  incRef(dataId: tf.DataId): void;
};

/** tfjs-backend-webgpu's WebGPUProgram (dist/webgpu_program.d.ts), the fields we set. */
export interface WebgpuProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout: { x: number[] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number];
  uniforms?: string;
  size?: boolean;
  variableComponents?: number[];
  getUserCode: () => string;
}

/** A uniform of our own, after tfjs's shapes: its WGSL name and type, and its value. */
export interface Uniform {
  name: string;
  type: 'f32' | 'u32' | 'i32';
  value: number;
}
type ProgramUniform = { type: 'float32' | 'uint32' | 'int32'; data: number[] };
const UNIFORM_TYPE = { f32: 'float32', u32: 'uint32', i32: 'int32' } as const;

export interface ProgramSpec {
  /** Unique per WGSL source: tfjs caches pipelines by this key plus the inputs' ranks and dtypes. */
  key: string;
  inputs: Record<string, tf.TensorInfo>;
  outputShape: number[];
  /** Threads per workgroup (a power of two: the row reductions halve it). */
  workgroup: number;
  /** Workgroups to dispatch (tfjs folds more than the device's limit into y and z). */
  workgroups: number;
  uniforms?: Uniform[];
  /** The body of `fn main(index : i32)`, index = the thread's global index. */
  main: string;
  /** WGSL declared before main (workgroup memory, helpers). */
  prelude?: string;
  /** Words per element of each input as bound (4: array<vec4<f32>>); 1 each by default. */
  components?: number[];
  /**
   * Writes into this float32 tensor's buffer (bound read_write as `result`, so main may read it
   * first) instead of a new one: its owner gives up its values. The output is then a view of it.
   */
  into?: tf.TensorInfo;
}

/** Runs one WGSL program → its float32 output (outputShape). */
export function runProgram(backend: WebgpuBackend, spec: ProgramSpec): tf.TensorInfo {
  const uniforms = spec.uniforms ?? [];
  const program: WebgpuProgram = {
    variableNames: Object.keys(spec.inputs),
    outputShape: spec.outputShape,
    shaderKey: `AttentionDebugger_${spec.key}_${spec.workgroup}`,
    dispatchLayout: { x: spec.outputShape.map((_, i) => i) },
    dispatch: [Math.max(1, spec.workgroups), 1, 1],
    workgroupSize: [spec.workgroup, 1, 1],
    uniforms: uniforms.map((u) => `${u.name} : ${u.type}, `).join(''),
    size: true,
    ...(spec.components ? { variableComponents: spec.components } : {}),
    getUserCode: () => `
      const WG = ${spec.workgroup};
      ${spec.prelude ?? ''}
      fn main(index : i32) {
        ${spec.main}
      }`,
  };
  const data = uniforms.map((u) => ({ type: UNIFORM_TYPE[u.type], data: [u.value] }));
  if (!spec.into) return backend.runWebGPUProgram(program, Object.values(spec.inputs), 'float32', data);
  const into = spec.into;
  if (into.dtype !== 'float32' || product(into.shape) !== product(spec.outputShape))
    throw new Error(`${spec.key}: cannot write [${spec.outputShape}] float32 into a ${into.dtype} [${into.shape}]`);
  backend.runWebGPUProgram(program, Object.values(spec.inputs), 'float32', data, into);
  backend.incRef(into.dataId); // a second tensor of the same buffer, as tfjs's reshape makes one
  return { dataId: into.dataId, shape: spec.outputShape, dtype: 'float32' };
}

/** One thread per element of `size`, `workgroup` threads a workgroup. */
export const perElement = (size: number, workgroup = 64) => ({ workgroup, workgroups: Math.ceil(size / workgroup) });

/** WGSL: fn `name`(value, tid), `combine` of the workgroup's values, via `red` (a tree over WG lanes). */
const workgroupReduce = (name: string, combine: (a: string, b: string) => string) => `
  fn ${name}(value : f32, tid : i32) -> f32 {
    red[tid] = value;
    workgroupBarrier();
    for (var s = WG / 2; s > 0; s = s / 2) {
      if (tid < s) {
        red[tid] = ${combine('red[tid]', 'red[tid + s]')};
      }
      workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
  }`;

/**
 * WGSL: workgroupSum(value, tid) and workgroupMax(value, tid) over the workgroup, the result visible
 * to all threads after they return (call them from uniform control flow).
 */
export const REDUCE = `
  var<workgroup> red : array<f32, WG>;
  ${workgroupReduce('workgroupSum', (a, b) => `${a} + ${b}`)}
  ${workgroupReduce('workgroupMax', (a, b) => `max(${a}, ${b})`)}`;

const kernel = (name: string): KernelFunc => {
  const config = tf.getKernel(name, 'webgpu');
  if (!config) throw new Error(`tfjs-backend-webgpu has no ${name} kernel: unexpected tfjs version`);
  return config.kernelFunc;
};
const call = (name: string, backend: WebgpuBackend, inputs: tf.NamedTensorInfoMap, attrs: object = {}) =>
  kernel(name)({ inputs, backend, attrs: attrs as tf.NamedAttrMap }) as tf.TensorInfo;

/** x as `shape`, sharing its buffer (tfjs's Reshape: dispose it as any output). */
export const reshape = (backend: WebgpuBackend, x: tf.TensorInfo, shape: number[]): tf.TensorInfo =>
  call(tf.Reshape, backend, { x }, { shape });

/** Rows from … from + count − 1 of x [rows, ...] (a copy; tfjs's Slice). */
export const sliceRows = (backend: WebgpuBackend, x: tf.TensorInfo, from: number, count: number): tf.TensorInfo =>
  call(
    tf.Slice,
    backend,
    { x },
    { begin: [from, ...x.shape.slice(1).map(() => 0)], size: [count, ...x.shape.slice(1)] },
  );

/** op(a)·op(b) (+ bias, then ReLU) for a, b of rank 2: tfjs's (below), ours (gemm.ts) and the switch between them. */
export type MatMul = (
  backend: WebgpuBackend,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  transposeA: boolean,
  transposeB: boolean,
  bias?: tf.TensorInfo,
  relu?: boolean,
) => tf.TensorInfo;

/**
 * MatMul by tfjs-backend-webgpu's own matMul (batchMatMulImpl, the _FusedMatMul kernel), with bias
 * and ReLU fused into it. gemmSwitch.ts matMul picks it or our own (gemm.ts).
 */
export const tfjsMatMul: MatMul = (backend, a, b, transposeA, transposeB, bias, relu = false) => {
  const attrs = { transposeA, transposeB, activation: relu ? 'relu' : 'linear', leakyreluAlpha: 0 };
  return call(tf._FusedMatMul, backend, bias ? { a, b, bias } : { a, b }, attrs);
};

/** Disposes intermediate results of a kernel (each TensorInfo once). */
export function disposeAll(backend: WebgpuBackend, infos: tf.TensorInfo[]): void {
  for (const t of infos) backend.disposeData(t.dataId);
}

/**
 * The dropout key of `seed`: native/norm.c dropout_key, splitmix64's finaliser of the seed (as a
 * uint64, its absolute value truncated) folded to 32 bits. WGSL has no 64-bit integers: the key is
 * computed here and passed to the shaders as a uniform.
 */
export function dropoutKey(seed: number): number {
  const m = (v: bigint) => BigInt.asUintN(64, v);
  let z = m(BigInt(Math.trunc(Math.abs(seed)) || 0) * 0x9e3779b97f4a7c15n);
  z = m((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = m((z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return Number(BigInt.asUintN(32, z ^ (z >> 32n)));
}

/** The uniforms of a dropout at `rate` from `seed`: its key, rate and 1/(1 − rate), rounded as norm.c's floats. */
export function dropoutUniforms(rate: number, seed: number): Uniform[] {
  if (!(rate >= 0 && rate < 1)) throw new RangeError(`dropout rate must be in [0, 1), not ${rate}`);
  const p = Math.fround(rate);
  return [
    { name: 'key', type: 'u32', value: dropoutKey(seed) },
    { name: 'rate', type: 'f32', value: p },
    { name: 'scale', type: 'f32', value: Math.fround(1 / Math.fround(1 - p)) },
  ];
}

/**
 * WGSL: whether element i is kept under the uniforms above, native/norm.c dropout_draw: murmur3's
 * 32-bit finaliser of i·φ + key, its top 24 bits as a draw in [0, 1), kept when the draw is ≥ rate
 * (u32 arithmetic wraps in WGSL, as uint32_t does in C); and its factor m, scale or 0.
 */
export const DROPOUT_MASK = `
  fn dropoutKeep(i : u32) -> bool {
    var h = i * 0x9E3779B9u + uniforms.key;
    h = h ^ (h >> 16u);
    h = h * 0x85EBCA6Bu;
    h = h ^ (h >> 13u);
    h = h * 0xC2B2AE35u;
    h = h ^ (h >> 16u);
    return f32(h >> 8u) * 5.9604644775390625e-8 >= uniforms.rate;
  }
  fn dropoutMask(i : u32) -> f32 {
    return select(0.0, uniforms.scale, dropoutKeep(i));
  }`;

export interface ColumnSumSpec {
  key: string;
  inputs: Record<string, tf.TensorInfo>;
  /** Rows summed over. */
  n: number;
  /** Output length; columns from … from + count − 1 are sums, the others 0. */
  length: number;
  from: number;
  count: number;
  /** WGSL: row i's term in column c (0 ≤ c < count; i32 i and c). */
  term: string;
  uniforms?: Uniform[];
  prelude?: string;
}

/**
 * Up to this many rows, columnSum sums in one pass: at a 32 × 32 batch (1,024 rows) a second
 * dispatch costs the host more than the GPU gains from spreading the rows (a step has ~40 sums).
 */
const ONE_PASS_ROWS = 2048;
/** Rows one workgroup sums in columnSum's first pass when there are more than ONE_PASS_ROWS. */
const CHUNK_ROWS = 128;

/**
 * out[from + c] = Σ_i term(i, c) for c < count, 0 elsewhere: a workgroup takes 32 columns (adjacent
 * threads read adjacent columns) of all the rows, or of a CHUNK_ROWS chunk of them past
 * ONE_PASS_ROWS, 8 threads a column, each over every 8th row, summed in workgroup memory; the
 * chunks' partial sums [chunks, length] are then summed by a second pass. For the bias and gain
 * gradients (column sums over rows).
 */
export function columnSum(backend: WebgpuBackend, spec: ColumnSumSpec): tf.TensorInfo {
  const rowsPer = spec.n <= ONE_PASS_ROWS ? Math.max(1, spec.n) : CHUNK_ROWS;
  const chunks = Math.max(1, Math.ceil(spec.n / rowsPer));
  const blocks = Math.ceil(spec.length / 32);
  const partial = runProgram(backend, {
    key: `colsum_${spec.key}`,
    inputs: spec.inputs,
    outputShape: [chunks, spec.length],
    workgroup: 256,
    workgroups: blocks * chunks,
    uniforms: [
      { name: 'n', type: 'i32', value: spec.n },
      { name: 'first', type: 'i32', value: spec.from },
      { name: 'cols', type: 'i32', value: spec.count },
      { name: 'len', type: 'i32', value: spec.length },
      { name: 'blocks', type: 'i32', value: blocks },
      { name: 'rowsPer', type: 'i32', value: rowsPer },
      ...(spec.uniforms ?? []),
    ],
    prelude: `
      var<workgroup> part : array<f32, WG>;
      ${spec.prelude ?? ''}
      fn columnTerm(i : i32, c : i32) -> f32 {
        return ${spec.term};
      }`,
    main: `
      let tid = i32(localIndex);
      let w = index / WG;
      let chunk = w / uniforms.blocks;
      let column = (w % uniforms.blocks) * 32 + tid % 32;
      let c = column - uniforms.first;
      let inside = c >= 0 && c < uniforms.cols;
      let end = min(uniforms.n, (chunk + 1) * uniforms.rowsPer);
      var acc = 0.0;
      if (inside) {
        for (var i = chunk * uniforms.rowsPer + tid / 32; i < end; i = i + WG / 32) {
          acc = acc + columnTerm(i, c);
        }
      }
      part[tid] = acc;
      workgroupBarrier();
      let at = chunk * uniforms.len + column;
      if (tid < 32 && column < uniforms.len && at < uniforms.size) {
        var total = 0.0;
        for (var lane = 0; lane < WG / 32; lane = lane + 1) {
          total = total + part[lane * 32 + tid];
        }
        result[at] = total;
      }`,
  });
  const out =
    chunks === 1
      ? reshape(backend, partial, [spec.length])
      : columnSum(backend, {
          key: 'partials',
          inputs: { partial },
          n: chunks,
          length: spec.length,
          from: 0,
          count: spec.length,
          term: 'partial[i * uniforms.cols + c]',
        });
  backend.disposeData(partial.dataId);
  return out;
}
