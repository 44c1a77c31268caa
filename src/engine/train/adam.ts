/**
 * §5.3 Adam (Kingma & Ba) with the paper's β1 = 0.9, β2 = 0.98, ε = 1e-9, as PyTorch computes it:
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,  θ ← θ − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
 * The learning rate is given each step (the schedule lives in schedule.ts). Its moments can be
 * saved and restored so that a resumed run continues exactly.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE, hasFusedKernel } from '../backend/fusedKernels';

export interface AdamOptions {
  beta1: number;
  beta2: number;
  epsilon: number;
}
export const PAPER_ADAM: AdamOptions = { beta1: 0.9, beta2: 0.98, epsilon: 1e-9 };

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
   * Applies one update with gradients keyed by variable name. With `ok` (a bool scalar on the
   * device) the update is gated there: where `ok` is false every parameter and moment keeps its old
   * value bit for bit (select, not a 0/1 factor: NaN·0 is NaN). `step` counts the update either way;
   * the caller puts it back when it reads that `ok` was false (train/step.ts).
   */
  apply(vars: tf.Variable[], grads: tf.NamedTensorMap, lr: number, ok?: tf.Tensor): void {
    this.step++;
    const { beta1, beta2, epsilon } = this.opts;
    const c1 = 1 - beta1 ** this.step;
    const c2 = 1 - beta2 ** this.step;
    const fused = hasFusedKernel(ADAM_UPDATE);
    const attrs = { lr, beta1, beta2, epsilon, c1, c2 };
    tf.tidy(() => {
      const okOfShape = new Map<string, tf.Tensor>(); // ok broadcast once per shape, not once per parameter
      const gated = (next: tf.Tensor, old: tf.Tensor): tf.Tensor => {
        if (!ok) return next;
        const key = old.shape.join(',');
        let cond = okOfShape.get(key);
        if (!cond) okOfShape.set(key, (cond = tf.broadcastTo(ok, old.shape)));
        return tf.where(cond, next, old);
      };
      for (const p of vars) {
        const g = grads[p.name];
        if (!g) continue;
        const m = this.moment(this.m, p);
        const v = this.moment(this.v, p);
        // The fused kernel (backend/wasm/nativeOps.ts, webgpu/adamUpdate.ts): one pass instead of ~12
        // kernels, gated inside; or tfjs ops, each gated against the old value before any assign.
        const [p2, m2, v2] = fused
          ? (tf.engine().runKernel(ADAM_UPDATE, ok ? { p, g, m, v, ok } : { p, g, m, v }, attrs) as tf.Tensor[])
          : this.unfusedUpdate(p, g, m, v, lr, c1, c2).map((next, i) => gated(next, [p, m, v][i]!));
        m.assign(m2!);
        v.assign(v2!);
        p.assign(p2!);
      }
    });
  }

  /** θ', m', v' of one parameter with tfjs ops (backends without the fused kernel). */
  private unfusedUpdate(p: tf.Tensor, g: tf.Tensor, m: tf.Tensor, v: tf.Tensor, lr: number, c1: number, c2: number) {
    const { beta1, beta2, epsilon } = this.opts;
    const m1 = tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1));
    const v1 = tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2));
    const step = tf.div(tf.div(m1, c1), tf.add(tf.sqrt(tf.div(v1, c2)), epsilon));
    return [tf.sub(p, tf.mul(step, lr)), m1, v1];
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
  async state(named: [string, tf.Variable][]): Promise<Map<string, { shape: number[]; data: Float32Array }>> {
    const out = new Map<string, { shape: number[]; data: Float32Array }>();
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
  restore(
    named: [string, tf.Variable][],
    step: number,
    state: Map<string, { shape: number[]; data: Float32Array }>,
    source: string,
  ): void {
    this.step = step;
    for (const [name, p] of named) {
      const m = state.get(`${name}.exp_avg`);
      const v = state.get(`${name}.exp_avg_sq`);
      if (!m || !v) throw new Error(`${source}: no Adam moments for "${name}"`);
      if (m.data.length !== p.size || v.data.length !== p.size)
        throw new Error(`${source}: Adam moments of "${name}" have ${m.data.length} values, the parameter ${p.size}`);
      this.moment(this.m, p).assign(tf.tensor(m.data, p.shape));
      this.moment(this.v, p).assign(tf.tensor(v.data, p.shape));
    }
  }

  dispose(): void {
    for (const s of [...this.m.values(), ...this.v.values()]) s.dispose();
    this.m.clear();
    this.v.clear();
  }
}
