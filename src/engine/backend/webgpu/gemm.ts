/**
 * Our own GEMM on webgpu (issue 30 item 2): C [M, N] = op(A)·op(B) (+ bias [N]) (then ReLU), op a
 * transpose or not, done by addressing (no transposed copy). A workgroup computes a BM×BN tile of C,
 * a thread TM×TN of it in registers (rows ty + i·BM/TM, columns tx + j·BN/TN, so that neighbouring
 * threads read neighbouring words of workgroup memory and write neighbouring words of C). Each
 * k-step of BK stages op(A) [BM, BK] and op(B) [BK, BN] in workgroup memory, stored k-major; the
 * staging is double-buffered: the next k-step's words are read from global memory into registers
 * before this step's products, and stored into the other half after them, one barrier a step.
 * Global reads are vec4 along an operand's contiguous dimension when its length and the tile's
 * allow it. Every read and write is guarded: any M, N, K. Bias and ReLU are the epilogue.
 * Subgroup operations are not used: tfjs-backend-webgpu creates the device without the
 * `subgroups` feature (base.js asks for timestamp-query only), so a shader cannot enable them.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { runProgram, type WebgpuBackend } from './program';

/** A GEMM's tile parameters: the workgroup's tile BM×BN, the k-step BK, the thread's TM×TN. */
export interface GemmTiles {
  bm: number;
  bn: number;
  bk: number;
  tm: number;
  tn: number;
}

/** WebGPU's default limits, which the tiles must keep: workgroup memory and invocations. */
const MAX_WORKGROUP_BYTES = 16384;
const MAX_INVOCATIONS = 256;

/** The tiles for large products (128×128 a workgroup, 8×8 a thread, 256 threads, 16 KiB staged). */
export const LARGE_TILES: GemmTiles = { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 };
/** The tiles where a side of C is small (decoding, the tests): 32×32 a workgroup, 4×4 a thread. */
export const SMALL_TILES: GemmTiles = { bm: 32, bn: 32, bk: 8, tm: 4, tn: 4 };

/** The tiles for C [m, n]: LARGE_TILES unless a side is under 128 (a 128-wide tile would idle). */
export const tilesFor = (m: number, n: number): GemmTiles => (Math.min(m, n) < 128 ? SMALL_TILES : LARGE_TILES);

/** Threads of a workgroup under `tiles`: (BM/TM)·(BN/TN). */
export const gemmThreads = (t: GemmTiles) => (t.bm / t.tm) * (t.bn / t.tn);

/** Throws unless `t` divides evenly and fits WebGPU's default limits; names the bad field. */
export function checkTiles(t: GemmTiles): void {
  for (const [name, v] of Object.entries(t))
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`gemm tiles: ${name} must be a positive integer, not ${v}`);
  if (t.bm % t.tm) throw new RangeError(`gemm tiles: bm ${t.bm} is not a multiple of tm ${t.tm}`);
  if (t.bn % t.tn) throw new RangeError(`gemm tiles: bn ${t.bn} is not a multiple of tn ${t.tn}`);
  const threads = gemmThreads(t);
  if (threads > MAX_INVOCATIONS) throw new RangeError(`gemm tiles: ${threads} threads a workgroup (over 256)`);
  const bytes = 2 * t.bk * (t.bm + t.bn) * 4;
  if (bytes > MAX_WORKGROUP_BYTES) throw new RangeError(`gemm tiles: bk·(bm + bn) stages ${bytes} bytes (over 16 KiB)`);
}

/**
 * How one operand is staged: its tile is `rows` × `cols` words of the operand as stored (cols along
 * its contiguous dimension), read `vec` words at a time; `at(r, c)` is its global word index and
 * `inside(r, c)` its bounds; `slot(r, c)` the word's place in one half of the staging array.
 */
interface Staging {
  name: string;
  stage: string;
  rows: number;
  cols: number;
  vec: number;
  at: (r: string, c: string) => string;
  inside: (r: string, c: string) => string;
  slot: (r: string, c: string) => string;
  half: number;
}

/** WGSL: the global reads of one k-step of `s` into registers reg_<name>[l] (zero outside). */
function readTile(s: Staging, threads: number): string {
  const units = (s.rows * s.cols) / s.vec;
  const per = Math.ceil(units / threads);
  const zero = s.vec === 4 ? 'vec4<f32>(0.0)' : '0.0';
  return `for (var l = 0; l < ${per}; l = l + 1) {
      let u = l * ${threads} + tid;
      let r = u / ${s.cols / s.vec};
      let c = (u % ${s.cols / s.vec}) * ${s.vec};
      var v = ${zero};
      if (u < ${units} && ${s.inside('r', 'c')}) {
        v = ${s.name}[(${s.at('r', 'c')}) / ${s.vec}];
      }
      reg_${s.name}[l] = v;
    }`;
}

/** WGSL: the registers of readTile stored into half `h` of the staging array. */
function storeTile(s: Staging, threads: number, h: string): string {
  const units = (s.rows * s.cols) / s.vec;
  const words = Array.from({ length: s.vec }, (_, j) => {
    const value = s.vec === 4 ? `reg_${s.name}[l][${j}]` : `reg_${s.name}[l]`;
    return `${s.stage}[(${h}) * ${s.half} + ${s.slot('r', `c + ${j}`)}] = ${value};`;
  });
  return `for (var l = 0; l < ${Math.ceil(units / threads)}; l = l + 1) {
      let u = l * ${threads} + tid;
      let r = u / ${s.cols / s.vec};
      let c = (u % ${s.cols / s.vec}) * ${s.vec};
      if (u < ${units}) {
        ${words.join('\n        ')}
      }
    }`;
}

export interface GemmOptions {
  transposeA: boolean;
  transposeB: boolean;
  relu: boolean;
  /** Whether a bias [N] is added. */
  bias: boolean;
  /** Whether A and B are read as vec4 (their contiguous lengths and tiles allow it). */
  vecA: boolean;
  vecB: boolean;
}

/** The WGSL of the GEMM under tiles `t` and options `o` (main's body and its prelude). */
export function gemmSource(t: GemmTiles, o: GemmOptions): { prelude: string; main: string } {
  const threads = gemmThreads(t);
  const [tx, ty] = [t.bn / t.tn, t.bm / t.tm];
  const u = (name: string) => `uniforms.${name}`;
  // op(A) [M, K]: A is [M, K] (k contiguous) or, transposed, [K, M] (m contiguous); staged as As[k][m].
  const sa: Staging = o.transposeA
    ? {
        name: 'a',
        stage: 'As',
        rows: t.bk,
        cols: t.bm,
        vec: o.vecA ? 4 : 1,
        at: (r, c) => `(k0 + ${r}) * ${u('dimM')} + m0 + ${c}`,
        inside: (r, c) => `k0 + ${r} < ${u('dimK')} && m0 + ${c} < ${u('dimM')}`,
        slot: (r, c) => `(${r}) * ${t.bm} + ${c}`,
        half: t.bk * t.bm,
      }
    : {
        name: 'a',
        stage: 'As',
        rows: t.bm,
        cols: t.bk,
        vec: o.vecA ? 4 : 1,
        at: (r, c) => `(m0 + ${r}) * ${u('dimK')} + k0 + ${c}`,
        inside: (r, c) => `m0 + ${r} < ${u('dimM')} && k0 + ${c} < ${u('dimK')}`,
        slot: (r, c) => `(${c}) * ${t.bm} + ${r}`,
        half: t.bk * t.bm,
      };
  // op(B) [K, N]: B is [K, N] (n contiguous) or, transposed, [N, K] (k contiguous); staged as Bs[k][n].
  const sb: Staging = o.transposeB
    ? {
        name: 'b',
        stage: 'Bs',
        rows: t.bn,
        cols: t.bk,
        vec: o.vecB ? 4 : 1,
        at: (r, c) => `(n0 + ${r}) * ${u('dimK')} + k0 + ${c}`,
        inside: (r, c) => `n0 + ${r} < ${u('dimN')} && k0 + ${c} < ${u('dimK')}`,
        slot: (r, c) => `(${c}) * ${t.bn} + ${r}`,
        half: t.bk * t.bn,
      }
    : {
        name: 'b',
        stage: 'Bs',
        rows: t.bk,
        cols: t.bn,
        vec: o.vecB ? 4 : 1,
        at: (r, c) => `(k0 + ${r}) * ${u('dimN')} + n0 + ${c}`,
        inside: (r, c) => `k0 + ${r} < ${u('dimK')} && n0 + ${c} < ${u('dimN')}`,
        slot: (r, c) => `(${r}) * ${t.bn} + ${c}`,
        half: t.bk * t.bn,
      };
  const regs = (s: Staging) =>
    `var reg_${s.name} : array<${s.vec === 4 ? 'vec4<f32>' : 'f32'}, ${Math.ceil((s.rows * s.cols) / s.vec / threads)}>;`;
  const is = Array.from({ length: t.tm }, (_, i) => i);
  const js = Array.from({ length: t.tn }, (_, j) => j);
  const products = is.flatMap((i) => js.map((j) => `acc[${i * t.tn + j}] = fma(a${i}, b${j}, acc[${i * t.tn + j}]);`));
  const epilogue = is.flatMap((i) =>
    js.map((j) => {
      let v = `acc[${i * t.tn + j}]`;
      if (o.bias) v = `${v} + bias[n0 + tx + ${j * tx}]`;
      if (o.relu) v = `max(${v}, 0.0)`;
      return `if (m0 + ty + ${i * ty} < ${u('dimM')} && n0 + tx + ${j * tx} < ${u('dimN')}) {
          result[(m0 + ty + ${i * ty}) * ${u('dimN')} + n0 + tx + ${j * tx}] = ${v};
        }`;
    }),
  );
  const prelude = `
    var<workgroup> As : array<f32, ${2 * t.bk * t.bm}>;
    var<workgroup> Bs : array<f32, ${2 * t.bk * t.bn}>;`;
  const main = `
    let tid = i32(localIndex);
    let w = index / WG;
    let tilesN = (${u('dimN')} + ${t.bn - 1}) / ${t.bn};
    let m0 = (w / tilesN) * ${t.bm};
    let n0 = (w % tilesN) * ${t.bn};
    let tx = tid % ${tx};
    let ty = tid / ${tx};
    var acc : array<f32, ${t.tm * t.tn}>;
    ${regs(sa)}
    ${regs(sb)}
    let steps = (${u('dimK')} + ${t.bk - 1}) / ${t.bk};
    if (steps > 0) {
      let k0 = 0;
      ${readTile(sa, threads)}
      ${readTile(sb, threads)}
      ${storeTile(sa, threads, '0')}
      ${storeTile(sb, threads, '0')}
    }
    workgroupBarrier();
    for (var step = 0; step < steps; step = step + 1) {
      let h = step % 2;
      let more = step + 1 < steps;
      if (more) {
        let k0 = (step + 1) * ${t.bk};
        ${readTile(sa, threads)}
        ${readTile(sb, threads)}
      }
      for (var kk = 0; kk < ${t.bk}; kk = kk + 1) {
        let ao = h * ${t.bk * t.bm} + kk * ${t.bm} + ty;
        let bo = h * ${t.bk * t.bn} + kk * ${t.bn} + tx;
        ${is.map((i) => `let a${i} = As[ao + ${i * ty}];`).join(' ')}
        ${js.map((j) => `let b${j} = Bs[bo + ${j * tx}];`).join(' ')}
        ${products.join('\n        ')}
      }
      if (more) {
        ${storeTile(sa, threads, '1 - h')}
        ${storeTile(sb, threads, '1 - h')}
      }
      workgroupBarrier();
    }
    ${epilogue.join('\n    ')}`;
  return { prelude, main };
}

/**
 * op(a)·op(b) (+ bias [N]) (then ReLU) for a, b of rank 2, with our kernel under `tiles` (tilesFor
 * the shape by default) → C [M, N].
 */
export function gemm(
  backend: WebgpuBackend,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  transposeA: boolean,
  transposeB: boolean,
  bias?: tf.TensorInfo,
  relu = false,
  tiles?: GemmTiles,
): tf.TensorInfo {
  if (a.shape.length !== 2 || b.shape.length !== 2)
    throw new RangeError(`gemm: a [${a.shape}] and b [${b.shape}] must be of rank 2`);
  const [m, k] = transposeA ? [a.shape[1]!, a.shape[0]!] : [a.shape[0]!, a.shape[1]!];
  const [kb, n] = transposeB ? [b.shape[1]!, b.shape[0]!] : [b.shape[0]!, b.shape[1]!];
  if (k !== kb) throw new RangeError(`gemm: inner sizes differ: op(a) [${m}, ${k}], op(b) [${kb}, ${n}]`);
  if (bias && (bias.shape.length !== 1 || bias.shape[0] !== n))
    throw new RangeError(`gemm: bias [${bias.shape}] must be [${n}]`);
  if (m * n === 0) return backend.makeTensorInfo([m, n], 'float32', new Float32Array(0));
  const t = tiles ?? tilesFor(m, n);
  checkTiles(t);
  // vec4 along the contiguous dimension: its length and the tile's side along it divisible by 4.
  const vecA = transposeA ? m % 4 === 0 && t.bm % 4 === 0 : k % 4 === 0 && t.bk % 4 === 0;
  const vecB = transposeB ? k % 4 === 0 && t.bk % 4 === 0 : n % 4 === 0 && t.bn % 4 === 0;
  const o: GemmOptions = { transposeA, transposeB, relu, bias: !!bias, vecA, vecB };
  const key = `gemm_${t.bm}x${t.bn}x${t.bk}_${t.tm}x${t.tn}_${+transposeA}${+transposeB}${+o.bias}${+relu}${+vecA}${+vecB}`;
  return runProgram(backend, {
    key,
    inputs: bias ? { a, b, bias } : { a, b },
    components: [vecA ? 4 : 1, vecB ? 4 : 1, ...(bias ? [1] : [])],
    outputShape: [m, n],
    workgroup: gemmThreads(t),
    workgroups: Math.ceil(m / t.bm) * Math.ceil(n / t.bn),
    uniforms: [
      { name: 'dimM', type: 'i32', value: m },
      { name: 'dimN', type: 'i32', value: n },
      { name: 'dimK', type: 'i32', value: k },
    ],
    ...gemmSource(t, o),
  });
}
