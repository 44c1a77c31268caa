/**
 * §5.3 Adam's update on webgpu (ADAM_UPDATE, as native/ops.c adam does it on wasm), so that
 * train/adam.ts updates a parameter in three elementwise dispatches instead of ~12 tfjs kernels:
 *   m' = β1·m + (1−β1)·g,  v' = β2·v + (1−β2)·g²,  θ' = θ − lr · (m'/c1) / (√(v'/c2) + ε)
 * with c1 = 1 − β1^t and c2 = 1 − β2^t given by adam.ts. A tfjs program has one output, so each of
 * θ', m' and v' is its own program (θ' computes m' and v' again from the inputs: the three are independent).
 * The inputs are not written: the outputs are new tensors, which adam.ts assigns. With the optional
 * input `ok` (a bool scalar: the step's loss and gradient norm are finite), each output selects the
 * old value where it is false, bit for bit, in the same dispatch.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE } from '../fusedKernels';
import { addKernel, type KernelFunc } from '../kernels';
import { perElement, runProgram, type Uniform, type WebgpuBackend } from './program';

interface AdamAttrs {
  lr: number;
  beta1: number;
  beta2: number;
  epsilon: number;
  c1: number;
  c2: number;
}

/**
 * WGSL: the moments of element k, in the order and precision of adam.ts's tfjs ops (and ops.c):
 * each constant a float32 uniform rounded from its double, 1 − β as the double's difference.
 */
const FIRST_MOMENT = `
  fn firstMoment(k : i32) -> f32 {
    return m[k] * uniforms.beta1 + g[k] * uniforms.oneMinusBeta1;
  }`;
const SECOND_MOMENT = `
  fn secondMoment(k : i32) -> f32 {
    return v[k] * uniforms.beta2 + (g[k] * g[k]) * uniforms.oneMinusBeta2;
  }`;

/** p, g, m, v (float32, one shape), ok? → p', m', v'; attrs lr, beta1, beta2, epsilon, c1, c2. */
const adamUpdateKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { p, g, m, v, ok } = inputs as Record<'p' | 'g' | 'm' | 'v', tf.TensorInfo> & { ok?: tf.TensorInfo };
  const a = attrs as unknown as AdamAttrs;
  const backend = be as WebgpuBackend;
  const size = p.shape.reduce((x, y) => x * y, 1);
  const f32 = (name: string, value: number): Uniform => ({ name, type: 'f32', value });
  const [beta1, beta2] = [f32('beta1', a.beta1), f32('beta2', a.beta2)];
  const [oneMinusBeta1, oneMinusBeta2] = [f32('oneMinusBeta1', 1 - a.beta1), f32('oneMinusBeta2', 1 - a.beta2)];
  // Each program binds only the inputs it reads (tfjs's 'auto' pipeline layouts leave unread ones
  // out, and its bind group would not match) and declares only the moments of those inputs.
  // Gated: select(old, new, ok), which keeps the old bits where the new value is NaN.
  const run = (key: string, ins: Record<string, tf.TensorInfo>, uniforms: Uniform[], value: string) =>
    runProgram(backend, {
      key: `adam_${key}${ok ? '_gated' : ''}`,
      inputs: ok ? { ...ins, ok } : ins,
      outputShape: p.shape,
      ...perElement(size, 256),
      uniforms,
      prelude: `${ins.m ? FIRST_MOMENT : ''}
        ${ins.v ? SECOND_MOMENT : ''}`,
      main: `
        if (index < uniforms.size) {
          result[index] = ${ok ? `select(${key}[index], ${value}, ok[0] != 0)` : value};
        }`,
    });
  const m1 = run('m', { g, m }, [beta1, oneMinusBeta1], 'firstMoment(index)');
  const v1 = run('v', { g, v }, [beta2, oneMinusBeta2], 'secondMoment(index)');
  const p1 = run(
    'p',
    { p, g, m, v },
    [
      beta1,
      beta2,
      oneMinusBeta1,
      oneMinusBeta2,
      f32('lr', a.lr),
      f32('epsilon', a.epsilon),
      f32('c1', a.c1),
      f32('c2', a.c2),
    ],
    'p[index] - ((firstMoment(index) / uniforms.c1) / (sqrt(secondMoment(index) / uniforms.c2) + uniforms.epsilon)) * uniforms.lr',
  );
  return [p1, m1, v1];
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuAdam(): void {
  addKernel(ADAM_UPDATE, 'webgpu', adamUpdateKernel);
}
