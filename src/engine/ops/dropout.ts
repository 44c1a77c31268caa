/**
 * Dropout that is the identity outside training (§5.4), the same in every ops implementation: one
 * native kernel each way where the backend has the training kernels (its own draws,
 * backend/trainingOps.ts), else tfjs's. `seed` makes it repeatable.
 */
import * as tf from '@tensorflow/tfjs-core';
import { blockDropout, hasTrainingKernels } from '../backend/trainingOps';
import { randomSeed } from '../model/layers';

export function dropout(x: tf.Tensor, rate: number, training: boolean, seed?: number): tf.Tensor {
  if (!training || rate <= 0) return x;
  if (hasTrainingKernels() && x.dtype === 'float32') return blockDropout(x, rate, seed ?? randomSeed());
  return tf.dropout(x, rate, undefined, seed);
}
