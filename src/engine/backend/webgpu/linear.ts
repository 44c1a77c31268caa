/**
 * LINEAR and LINEAR_GRAD on webgpu: y = act(x·Wᵀ + b) and its gradient through the ReLU. The
 * products are gemmSwitch.ts matMul (tfjs-backend-webgpu's tuned matMul or our gemm.ts; bias and ReLU
 * fused into the forward product); WGSL only for what it lacks: the ReLU's mask on dy, db as a column sum, and
 * dW's rows placed in a zero [out, in] when attrs.rows picks a block of rows of W (W^Q, W^K or W^V
 * of the stacked [3d, d]). Those rows of W and b are a copy here (tfjs's Slice, [count, in]): WebGPU
 * bindings cannot start inside a tensor's buffer, and the copy is a fraction of the product.
 * Shapes and results as the wasm kernels (wasm/inferenceKernels.ts linearKernel, wasm/trainingKernels.ts
 * linearGradKernel over native/blas.c linear_backward), since fusedLinear uses LINEAR for decoding too.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { linearRows } from '../inferenceOps';
import { type KernelFunc, product } from '../kernels';
import { columnSum, disposeAll, perElement, reshape, runProgram, sliceRows, type WebgpuBackend } from './program';
import { matMul } from './gemmSwitch';

interface LinearAttrs {
  relu: boolean;
  rows: [number, number];
}

/** The rows of W in use ([from, count]) and the sizes of x [..., in] as [n, in]. */
function linearDims(x: tf.TensorInfo, w: tf.TensorInfo, b: tf.TensorInfo | undefined, rows: [number, number]) {
  const all = w.shape[0]!;
  const [from, outDim] = linearRows(w, b, rows);
  const n = product(x.shape.slice(0, -1));
  return { inDim: x.shape[x.shape.length - 1]!, all, from, outDim, n, block: outDim < all };
}

/** x [..., in], w [out, in], b [out] → [..., out] (count rows of W and b with attrs.rows); attrs.relu. */
export const linearKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { x, w, b } = inputs as Record<'x' | 'w' | 'b', tf.TensorInfo>;
  const { relu, rows } = attrs as unknown as LinearAttrs;
  const backend = be as WebgpuBackend;
  const { inDim, from, outDim, n, block } = linearDims(x, w, b, rows);
  const shape = [...x.shape.slice(0, -1), outDim];
  if (n * outDim === 0) return backend.makeTensorInfo(shape, 'float32', new Float32Array(0));
  if (inDim === 0) throw new RangeError(`a linear map from 0 features: x [${x.shape}], w [${w.shape}]`);
  const temps = [reshape(backend, x, [n, inDim])]; // [n, in]
  const [wRows, bRows] = block ? [sliceRows(backend, w, from, outDim), sliceRows(backend, b, from, outDim)] : [w, b];
  if (block) temps.push(wRows, bRows);
  const y = matMul(backend, temps[0]!, wRows, false, true, bRows, relu); // [n, out]
  temps.push(y);
  const out = reshape(backend, y, shape); // [..., out]
  disposeAll(backend, temps);
  return out;
};

/** dy, x, w, y of LINEAR → dx [..., in], dW [all, in] (zero outside attrs.rows), db [all] */
export const linearGradKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { dy, x, w, y } = inputs as Record<'dy' | 'x' | 'w' | 'y', tf.TensorInfo>;
  const { relu, rows } = attrs as unknown as LinearAttrs;
  const backend = be as WebgpuBackend;
  const { inDim, all, from, outDim, n, block } = linearDims(x, w, undefined, rows);
  if (n * outDim * inDim === 0) throw new RangeError(`an empty linear map: x [${x.shape}], w [${w.shape}]`);
  // dz = dy ⊙ (y > 0) with ReLU (tfjs's ReLU gradient: 0 at 0), else dy: [n, out]
  const dz = relu
    ? runProgram(backend, {
        key: 'relu_grad',
        inputs: { dy, y },
        outputShape: [n, outDim],
        ...perElement(n * outDim),
        main: `
          if (index < uniforms.size) {
            result[index] = select(0.0, dy[index], y[index] > 0.0);
          }`,
      })
    : reshape(backend, dy, [n, outDim]);
  const x2 = reshape(backend, x, [n, inDim]); // [n, in]
  const wRows = block ? sliceRows(backend, w, from, outDim) : w; // [out, in]
  const dx2 = matMul(backend, dz, wRows, false, false); // [n, in]
  const dwRows = matMul(backend, dz, x2, true, false); // [out, in]
  const temps = [dz, x2, dx2, ...(block ? [wRows, dwRows] : [])];
  const dx = reshape(backend, dx2, x.shape);
  // dW's rows in a zero [all, in]
  const dw = block
    ? runProgram(backend, {
        key: 'place_rows',
        inputs: { dwRows },
        outputShape: w.shape,
        ...perElement(all * inDim),
        uniforms: [
          { name: 'first', type: 'i32', value: from * inDim },
          { name: 'count', type: 'i32', value: outDim * inDim },
        ],
        main: `
          if (index < uniforms.size) {
            let k = index - uniforms.first;
            result[index] = select(0.0, dwRows[clamp(k, 0, uniforms.count - 1)], k >= 0 && k < uniforms.count);
          }`,
      })
    : dwRows;
  const db = columnSum(backend, {
    key: 'dbias',
    inputs: { dy: dz },
    n,
    length: all,
    from,
    count: outDim,
    term: 'dy[i * uniforms.cols + c]',
  });
  disposeAll(backend, temps);
  return [dx, dw, db];
};
