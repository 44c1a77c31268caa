/**
 * §5.3 Adam's update on webgpu (ADAM_UPDATE, as native/ops.c adam does it on wasm), so that
 * train/adam.ts updates a parameter in three elementwise dispatches instead of ~12 tfjs kernels
 * (and ADAM_UPDATE_FLAT: every parameter in one dispatch, for train/flatAdam.ts):
 *   m' = β1·m + (1−β1)·g,  v' = β2·v + (1−β2)·g²,  θ' = θ − lr · (m'/c1) / (√(v'/c2) + ε)
 * with c1 = 1 − β1^t and c2 = 1 − β2^t given by adam.ts. A tfjs program has one output, so each of
 * θ', m' and v' is its own program (θ' computes m' and v' again from the inputs: the three are independent).
 * The inputs are not written: the outputs are new tensors, which adam.ts assigns. With the optional
 * input `ok` (a bool scalar: the step's loss and gradient norm are finite), each output selects the
 * old value where it is false, bit for bit, in the same dispatch.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE, ADAM_UPDATE_FLAT, type AdamAttrs } from '../fusedKernels';
import { addKernel, product, type KernelFunc } from '../kernels';
import { perElement, runProgram, type Uniform, type WebgpuBackend } from './program';

/**
 * WGSL: the moments of element k, in the order and precision of adam.ts's tfjs ops (and ops.c):
 * each constant a float32 uniform rounded from its double, 1 − β as the double's difference.
 * `m`, `v` and `g` are how element k of each is read (the flat kernel reads m and v from its state).
 */
const firstMoment = (m: string, g: string) => `
  fn firstMoment(k : i32) -> f32 {
    return ${m} * uniforms.beta1 + ${g} * uniforms.oneMinusBeta1;
  }`;
const secondMoment = (v: string, g: string) => `
  fn secondMoment(k : i32) -> f32 {
    return ${v} * uniforms.beta2 + (${g} * ${g}) * uniforms.oneMinusBeta2;
  }`;
/** WGSL: θ' of element k, from θ read as `p`. */
const nextParameter = (p: string) =>
  `${p} - ((firstMoment(k) / uniforms.c1) / (sqrt(secondMoment(k) / uniforms.c2) + uniforms.epsilon)) * uniforms.lr`;

const f32 = (name: string, value: number): Uniform => ({ name, type: 'f32', value });
/** The uniforms both kernels declare, from adam.ts's attributes. */
const adamUniforms = (a: AdamAttrs): Uniform[] => [
  f32('beta1', a.beta1),
  f32('beta2', a.beta2),
  f32('oneMinusBeta1', 1 - a.beta1),
  f32('oneMinusBeta2', 1 - a.beta2),
  f32('lr', a.lr),
  f32('epsilon', a.epsilon),
  f32('c1', a.c1),
  f32('c2', a.c2),
];

/** p, g, m, v (float32, one shape), ok? → p', m', v'; attrs lr, beta1, beta2, epsilon, c1, c2. */
const adamUpdateKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { p, g, m, v, ok } = inputs as Record<'p' | 'g' | 'm' | 'v', tf.TensorInfo> & { ok?: tf.TensorInfo };
  const backend = be as WebgpuBackend;
  const size = product(p.shape);
  // Each program binds only the inputs it reads (tfjs's 'auto' pipeline layouts leave unread ones
  // out, and its bind group would not match) and declares only the moments of those inputs.
  // Gated: select(old, new, ok), which keeps the old bits where the new value is NaN.
  const run = (key: string, ins: Record<string, tf.TensorInfo>, value: string) =>
    runProgram(backend, {
      key: `adam_${key}${ok ? '_gated' : ''}`,
      inputs: ok ? { ...ins, ok } : ins,
      outputShape: p.shape,
      ...perElement(size, 256),
      uniforms: adamUniforms(attrs as unknown as AdamAttrs),
      prelude: `${ins.m ? firstMoment('m[k]', 'g[k]') : ''}
        ${ins.v ? secondMoment('v[k]', 'g[k]') : ''}`,
      main: `
        let k = index;
        if (k < uniforms.size) {
          result[k] = ${ok ? `select(${key}[k], ${value}, ok[0] != 0)` : value};
        }`,
    });
  const m1 = run('m', { g, m }, 'firstMoment(k)');
  const v1 = run('v', { g, v }, 'secondMoment(k)');
  const p1 = run('p', { p, g, m, v }, nextParameter('p[k]'));
  return [p1, m1, v1];
};

/**
 * The update of every parameter at once, in one dispatch (flatAdam.ts, issue 30): g [N] is the
 * gradients laid end to end, s [3N] the state θ | m | v, and p [N] the parameters where s's θ part
 * is not theirs (absent: θ is read from s); with ok? as above and scale? (a float32 scalar: g is
 * g·scale, as tf.mul makes it) → s' [3N], θ' | m' | v'. Element k's arithmetic is adamUpdateKernel's,
 * bit for bit.
 */
const adamUpdateFlatKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { p, g, s, ok, scale } = inputs as Record<'g' | 's', tf.TensorInfo> &
    Partial<Record<'p' | 'ok' | 'scale', tf.TensorInfo>>;
  const n = product(g.shape);
  if ((p && product(p.shape) !== n) || product(s.shape) !== 3 * n)
    throw new RangeError(
      `${ADAM_UPDATE_FLAT}: g has ${n} values, p ${p && product(p.shape)}, s ${product(s.shape)} (3·${n})`,
    );
  const theta = p ? 'p[k]' : 's[k]';
  const gated = (old: string, value: string) => (ok ? `select(${old}, ${value}, ok[0] != 0)` : value);
  return runProgram(be as WebgpuBackend, {
    key: `adam_flat${p ? '' : '_theta_in_s'}${ok ? '_gated' : ''}${scale ? '_scaled' : ''}`,
    inputs: { ...(p ? { p } : {}), g, s, ...(ok ? { ok } : {}), ...(scale ? { scale } : {}) },
    outputShape: [3 * n],
    ...perElement(n, 256),
    uniforms: [...adamUniforms(attrs as unknown as AdamAttrs), { name: 'n', type: 'i32', value: n }],
    prelude: `
      fn gradient(k : i32) -> f32 {
        return ${scale ? 'g[k] * scale[0]' : 'g[k]'};
      }
      ${firstMoment('s[uniforms.n + k]', 'gradient(k)')}
      ${secondMoment('s[2 * uniforms.n + k]', 'gradient(k)')}`,
    main: `
      let k = index;
      if (k < uniforms.n) {
        result[k] = ${gated(theta, nextParameter(theta))};
        result[uniforms.n + k] = ${gated('s[uniforms.n + k]', 'firstMoment(k)')};
        result[2 * uniforms.n + k] = ${gated('s[2 * uniforms.n + k]', 'secondMoment(k)')};
      }`,
  });
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuAdam(): void {
  addKernel(ADAM_UPDATE, 'webgpu', adamUpdateKernel);
  addKernel(ADAM_UPDATE_FLAT, 'webgpu', adamUpdateFlatKernel);
}
