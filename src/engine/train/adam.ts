/**
 * §5.3 Adam (Kingma & Ba) with the paper's β1 = 0.9, β2 = 0.98, ε = 1e-9, as PyTorch computes it:
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,  θ ← θ − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
 * The learning rate is given each step (the schedule lives in schedule.ts). Its moments can be
 * saved and restored so that a resumed run continues exactly.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE, type AdamAttrs, hasFusedKernel } from '../backend/fusedKernels';

export interface AdamOptions {
  beta1: number;
  beta2: number;
  epsilon: number;
}
export const PAPER_ADAM: AdamOptions = { beta1: 0.9, beta2: 0.98, epsilon: 1e-9 };

/** The attributes of update number `step` (t, from 1) at rate `lr`. */
export function adamAttrs(opts: AdamOptions, step: number, lr: number): AdamAttrs {
  return { ...opts, lr, c1: 1 - opts.beta1 ** step, c2: 1 - opts.beta2 ** step };
}

/** The gate of an update: the bool scalar `ok`, and ok broadcast to a tensor's shape. */
export interface AdamGate {
  ok: tf.Tensor;
  okLike: (x: tf.Tensor) => tf.Tensor;
}

/**
 * θ', m', v' of one parameter, or of all of them laid end to end (flatAdam.ts): the fused kernel
 * where the backend has it (backend/wasm/nativeOps.ts, webgpu/adamUpdate.ts: one pass instead of
 * ~12 kernels, gated inside), else tfjs's ops, each gated against the old value. Ungated without `gate`.
 */
export function adamUpdate(
  p: tf.Tensor,
  g: tf.Tensor,
  m: tf.Tensor,
  v: tf.Tensor,
  a: AdamAttrs,
  gate?: AdamGate,
): tf.Tensor[] {
  const ok = gate?.ok;
  if (hasFusedKernel(ADAM_UPDATE))
    return tf.engine().runKernel(ADAM_UPDATE, ok ? { p, g, m, v, ok } : { p, g, m, v }, { ...a }) as tf.Tensor[];
  const m1 = tf.add(tf.mul(m, a.beta1), tf.mul(g, 1 - a.beta1));
  const v1 = tf.add(tf.mul(v, a.beta2), tf.mul(tf.square(g), 1 - a.beta2));
  const step = tf.div(tf.div(m1, a.c1), tf.add(tf.sqrt(tf.div(v1, a.c2)), a.epsilon));
  const next = [tf.sub(p, tf.mul(step, a.lr)), m1, v1];
  return gate ? next.map((x, i) => tf.where(gate.okLike(x), x, [p, m, v][i]!)) : next;
}

/** Adam's moments as plain arrays, named `<param>.exp_avg` / `.exp_avg_sq` (PyTorch's names). */
export type AdamState = Map<string, { shape: number[]; data: Float32Array }>;

/** Parameter `name`'s two moments in `state`, checked: both present, each with p's size. */
export function savedMoments(state: AdamState, name: string, p: tf.Variable, source: string) {
  const m = state.get(`${name}.exp_avg`);
  const v = state.get(`${name}.exp_avg_sq`);
  if (!m || !v) throw new Error(`${source}: no Adam moments for "${name}"`);
  if (m.data.length !== p.size || v.data.length !== p.size)
    throw new Error(`${source}: Adam moments of "${name}" have ${m.data.length} values, the parameter ${p.size}`);
  return { m: m.data, v: v.data };
}

export class Adam {
  /** Number of updates applied so far (t). */
  step = 0;
  private readonly m = new Map<tf.Variable, tf.Variable>();
  private readonly v = new Map<tf.Variable, tf.Variable>();

  constructor(readonly opts: AdamOptions = PAPER_ADAM) {}

  private moment(store: Map<tf.Variable, tf.Variable>, p: tf.Variable): tf.Variable {
    let s = store.get(p);
    if (!s) store.set(p, (s = tf.variable(tf.zerosLike(p), false)));
    return s;
  }

  /**
   * Applies one update with gradients keyed by variable name, each first multiplied by `scale` (a
   * float32 scalar on the device: the clipping factor) where given. With `ok` (a bool scalar on the
   * device) the update is gated there: where `ok` is false every parameter and moment keeps its old
   * value bit for bit (select, not a 0/1 factor: NaN·0 is NaN). `step` counts the update either way;
   * the caller puts it back when it reads that `ok` was false (train/step.ts).
   */
  apply(vars: tf.Variable[], grads: tf.NamedTensorMap, lr: number, ok?: tf.Tensor, scale?: tf.Tensor): void {
    this.step++;
    const attrs = adamAttrs(this.opts, this.step, lr);
    tf.tidy(() => {
      const okOfShape = new Map<string, tf.Tensor>(); // ok broadcast once per shape, not once per parameter
      const okLike = (x: tf.Tensor): tf.Tensor => {
        const key = x.shape.join(',');
        let cond = okOfShape.get(key);
        if (!cond) okOfShape.set(key, (cond = tf.broadcastTo(ok!, x.shape)));
        return cond;
      };
      for (const p of vars) {
        const g = grads[p.name];
        if (!g) continue;
        const m = this.moment(this.m, p);
        const v = this.moment(this.v, p);
        const [p2, m2, v2] = adamUpdate(p, scale ? tf.mul(g, scale) : g, m, v, attrs, ok && { ok, okLike });
        m.assign(m2!);
        v.assign(v2!);
        p.assign(p2!);
      }
    });
  }

  /**
   * The parameters, their moments and t as they are now, to put back after a step that failed on the
   * GPU (train/step.ts). No copies: each kept tensor shares its variable's data, which an update
   * replaces (assign) rather than writes, so the old values stay whole until dispose().
   */
  keep(vars: tf.Variable[]): { restore(): void; dispose(): void } {
    const step = this.step;
    const kept = vars.map((p) => ({ p, value: tf.clone(p), m: this.m.get(p), v: this.v.get(p) }));
    const moments = kept.map(({ m, v }) => [m && tf.clone(m), v && tf.clone(v)] as const);
    return {
      restore: () => {
        this.step = step;
        kept.forEach(({ p, value, m, v }, i) => {
          p.assign(value);
          for (const [store, before, now, old] of [
            [this.m, m, this.m.get(p), moments[i]![0]],
            [this.v, v, this.v.get(p), moments[i]![1]],
          ] as const) {
            if (before && old) before.assign(old);
            else if (now) {
              now.dispose(); // made by the failed step: absent before it
              store.delete(p);
            }
          }
        });
      },
      dispose: () => tf.dispose([...kept.map((k) => k.value), ...moments.flat().filter((t) => t !== undefined)]),
    };
  }

  /** The moments as plain arrays, named `<param>.exp_avg` / `.exp_avg_sq` (PyTorch's names). */
  async state(named: [string, tf.Variable][]): Promise<AdamState> {
    const out: AdamState = new Map();
    for (const [name, p] of named) {
      const m = this.m.get(p);
      const v = this.v.get(p);
      if (!m || !v) continue;
      out.set(`${name}.exp_avg`, { shape: p.shape, data: (await m.data()) as Float32Array });
      out.set(`${name}.exp_avg_sq`, { shape: p.shape, data: (await v.data()) as Float32Array });
    }
    return out;
  }

  /** Restores moments saved by state(); every parameter must have both, with its shape. */
  restore(named: [string, tf.Variable][], step: number, state: AdamState, source: string): void {
    this.step = step;
    for (const [name, p] of named) {
      const { m, v } = savedMoments(state, name, p, source);
      this.moment(this.m, p).assign(tf.tensor(m, p.shape));
      this.moment(this.v, p).assign(tf.tensor(v, p.shape));
    }
  }

  dispose(): void {
    for (const s of [...this.m.values(), ...this.v.values()]) s.dispose();
    this.m.clear();
    this.v.clear();
  }
}
