/**
 * Σ over several float32 tensors of Σ x² on webgpu (trainingOps.ts SUM_OF_SQUARES), for the global
 * gradient norm: tfjs's ops take three dispatches a parameter (square, sum, add), this kernel one a
 * group of GROUP parameters and one at the end. WebGPU allows 8 storage buffers a shader stage
 * (tfjs asks for the default limit) and a program's output is one of them, so a program reads at
 * most 7: GROUP gradients and the running partial sums. More than GROUP inputs (a step's gradients)
 * are first laid end to end by copy commands (copies.ts), in runs of what one buffer binding holds
 * (one run below 512 Mi values on a GPU), so that the sum is one program and the last.
 * 1. a program per group: W workgroups (from the total size), each thread strides over every
 *    tensor of the group with step W·WG, its Σ x² summed over the workgroup; partial [W] =
 *    the previous group's partial + this group's (the first group has none);
 * 2. one workgroup sums the W partials → [1], a scalar view of it (none when W = 1).
 * W ≤ 1024: a 37000×512 embedding is ~72 elements a thread, not one workgroup's long serial sum.
 * Only adds and multiplies: a NaN or ±Inf element (or a square that overflows) makes the result
 * NaN or +Inf, which the step's finite check needs. No gradient: it runs on gradients, off the tape.
 */
import * as tf from '@tensorflow/tfjs-core';
import { addKernel, product, type KernelFunc } from '../kernels';
import { SUM_OF_SQUARES } from '../trainingOps';
import { gatherFlat, runsWithin } from './copies';
import { gpuBufferLimits } from './memorySize';
import { disposeAll, REDUCE, reshape, runProgram, type Uniform, type WebgpuBackend } from './program';

/** Gradients a program reads, with the partial sums of the groups before it: 7 storage buffers. */
const GROUP = 6;
/** Threads a workgroup. */
const WG = 256;
/** Elements a thread sums, about, before the partials are capped at MAX_WORKGROUPS. */
const PER_THREAD = 16;
/** Partial sums at most: the final pass's workgroup reads MAX_WORKGROUPS / WG each thread. */
const MAX_WORKGROUPS = 1024;

/** Workgroups of the group programs (their partial's length) for `total` elements in all. */
export const partialCount = (total: number): number =>
  Math.min(MAX_WORKGROUPS, Math.max(1, Math.ceil(total / (WG * PER_THREAD))));

/** xs in as few vectors as one buffer binding each holds (float32 values), their order kept. */
function laidEndToEnd(backend: WebgpuBackend, xs: tf.TensorInfo[]): tf.TensorInfo[] {
  const most = Math.floor(gpuBufferLimits()!.maxStorageBufferBindingSize / 4);
  const runs = runsWithin(
    xs.map((x) => product(x.shape)),
    most,
  );
  return runs.map((run) =>
    gatherFlat(
      backend,
      run.map((i) => xs[i]!),
    ),
  );
}

/** The inputs in any number (a map or an array, as addN's), float32 → Σ Σ x² as a float32 scalar. */
const sumOfSquaresKernel: KernelFunc = ({ inputs, backend: be }) => {
  const backend = be as WebgpuBackend;
  const xs = Object.values(inputs) as tf.TensorInfo[];
  for (const x of xs)
    if (x.dtype !== 'float32') throw new TypeError(`${SUM_OF_SQUARES} sums float32 tensors, not ${x.dtype}`);
  if (xs.length === 0) return backend.makeTensorInfo([], 'float32', new Float32Array([0]));
  const w = partialCount(xs.reduce((a, x) => a + product(x.shape), 0));
  // More than a program reads: laid end to end first, by copy commands (copies.ts), in runs that one
  // buffer binding holds, so that a step's gradient norm is one program and the final sum.
  const laid = xs.length > GROUP ? laidEndToEnd(backend, xs) : undefined;
  const ins = laid ?? xs;
  const sizes = ins.map((x) => product(x.shape));
  // Flat views (no copy): one pipeline per group size and per which sizes are 1 or W, not per rank.
  const flat = ins.map((x, k) => reshape(backend, x, [sizes[k]!]));
  let partial: tf.TensorInfo | undefined;
  for (let from = 0; from < flat.length; from += GROUP) {
    const group = flat.slice(from, from + GROUP);
    const names = group.map((_, j) => `g${j}`);
    const terms = names.map(
      (g, j) => `
        for (var i = index; i < uniforms.n${j}; i = i + uniforms.threads) {
          let x = ${g}[i];
          acc = acc + x * x;
        }`,
    );
    const uniforms: Uniform[] = [
      { name: 'threads', type: 'i32', value: w * WG },
      ...group.map((_, j): Uniform => ({ name: `n${j}`, type: 'i32', value: sizes[from + j]! })),
    ];
    // [W]: the partial of workgroup w, plus the groups' before it
    const next = runProgram(backend, {
      key: `sumsq_${group.length}${partial ? '_chained' : ''}`,
      inputs: { ...Object.fromEntries(names.map((g, j) => [g, group[j]!])), ...(partial ? { partial } : {}) },
      outputShape: [w],
      workgroup: WG,
      workgroups: w,
      uniforms,
      prelude: REDUCE,
      main: `
        let tid = i32(localIndex);
        var acc = 0.0;
        ${terms.join('')}
        let total = workgroupSum(acc, tid);
        let at = index / WG;
        if (tid == 0 && at < uniforms.size) {
          result[at] = total${partial ? ' + partial[at]' : ''};
        }`,
    });
    if (partial) disposeAll(backend, [partial]);
    partial = next;
  }
  disposeAll(backend, [...flat, ...(laid ?? [])]);
  const last = partial!;
  // [1]: the W partials summed by one workgroup
  const sum =
    w === 1
      ? last
      : runProgram(backend, {
          key: 'sumsq_partials',
          inputs: { last },
          outputShape: [1],
          workgroup: WG,
          workgroups: 1,
          uniforms: [{ name: 'parts', type: 'i32', value: w }],
          prelude: REDUCE,
          main: `
            let tid = i32(localIndex);
            var acc = 0.0;
            for (var i = tid; i < uniforms.parts; i = i + WG) {
              acc = acc + last[i];
            }
            let total = workgroupSum(acc, tid);
            if (tid == 0) {
              result[0] = total;
            }`,
        });
  const out = reshape(backend, sum, []);
  disposeAll(backend, w === 1 ? [last] : [last, sum]);
  return out;
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuSumOfSquares(): void {
  addKernel(SUM_OF_SQUARES, 'webgpu', sumOfSquaresKernel);
}
