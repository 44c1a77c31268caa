/**
 * DROPOUT on webgpu (§5.4): y = x ⊙ m, m = 1/(1 − p) where element i's counter-based draw is kept,
 * else 0. The draws are native/norm.c's bit for bit (program.ts DROPOUT_MASK, the key computed on
 * the CPU), so that webgpu and wasm drop the same elements for the same seed; the gradient
 * (trainingOps.ts) is this kernel on dy, which draws the forward mask again.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { type KernelFunc, product } from '../kernels';
import { DROPOUT_MASK, dropoutUniforms, perElement, runProgram, type WebgpuBackend } from './program';

/** x (any shape) → x ⊙ m; attrs.rate, attrs.seed. Element i is x's flat index i, as in norm.c. */
export const dropoutKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x } = inputs as { x: tf.TensorInfo };
  const { rate, seed } = attrs as { rate: number; seed: number };
  return runProgram(backend as WebgpuBackend, {
    key: 'dropout',
    inputs: { x },
    outputShape: x.shape,
    ...perElement(product(x.shape)),
    uniforms: dropoutUniforms(rate, seed),
    prelude: DROPOUT_MASK,
    // As norm.c: x·scale where kept, +0 where dropped (not x·0, which is −0 for negative x).
    main: `
      if (index < uniforms.size) {
        result[index] = select(0.0, x[index] * uniforms.scale, dropoutKeep(u32(index)));
      }`,
  });
};
