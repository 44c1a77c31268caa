/**
 * §5.3 Adam (adam.ts's update, bit for bit) with every parameter's moments laid end to end, so that
 * one update is one dispatch on webgpu instead of three a parameter (issue 30: base took 182 × 3).
 * The state is one vector s [3N] for the N values of all parameters: θ | m | v, each parameter at
 * the same offset in all three parts, in the order of the first update's parameters (cut into
 * groups, a state and a dispatch each, only where 3N would not fit one GPU buffer binding). A step gathers
 * the parameters and gradients into p [N] and g [N], runs ADAM_UPDATE_FLAT → s' [3N] (θ' | m' | v'),
 * and scatters θ' back into new tensors that the variables take (assign). On webgpu the gathers and
 * the scatter are buffer copies (backend/webgpu/copies.ts); elsewhere tfjs's concat and split, and
 * the update adam.ts's on the flat vectors. The state is replaced each update, never written, so
 * keep() holds the old one as adam.ts's keep holds the old moments.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE_FLAT, FLAT_GATHER, FLAT_SCATTER, hasFusedKernel, type AdamAttrs } from '../backend/fusedKernels';
import { runsWithin } from '../backend/webgpu/copies';
import { gpuBufferLimits } from '../backend/webgpu/memorySize';
import { adamAttrs, adamUpdate, type AdamOptions, type AdamState, PAPER_ADAM, savedMoments } from './adam';

/** Parameters laid end to end in one state: their order, where each starts, and their N values. */
interface Group {
  vars: tf.Variable[];
  at: Map<tf.Variable, number>;
  n: number;
}

/**
 * `vars` in order, cut into groups of at most `most` values (a parameter larger than that alone in
 * its group): the state [3N] of a group must fit one GPU buffer binding (2 GiB on an H100, where
 * `big`'s 3N would not). One group wherever it fits, the usual case.
 */
export function groupsOf(vars: tf.Variable[], most = Infinity): Group[] {
  return runsWithin(
    vars.map((p) => p.size),
    most,
  ).map((run) => {
    const group: Group = { vars: run.map((i) => vars[i]!), at: new Map(), n: 0 };
    for (const p of group.vars) {
      group.at.set(p, group.n);
      group.n += p.size;
    }
    return group;
  });
}

/** The most values a group may hold on the active backend: a 3N float32 state within one buffer binding. */
function groupLimit(): number {
  const limits = gpuBufferLimits();
  return limits ? Math.floor(Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize) / 12) : Infinity;
}

/** The tensors end to end [Σ sizes]: FLAT_GATHER where the backend has it (copies), else concat. */
function flatGather(xs: tf.Tensor[]): tf.Tensor1D {
  if (hasFusedKernel(FLAT_GATHER))
    return tf.engine().runKernel(FLAT_GATHER, { ...xs } as unknown as tf.NamedTensorMap) as tf.Tensor1D;
  return tf.concat(xs.map((x) => tf.reshape(x, [-1]))) as tf.Tensor1D;
}

/** Vectors of `sizes` cut from x's start: FLAT_SCATTER where the backend has it, else slice and split. */
function flatScatter(x: tf.Tensor1D, sizes: number[]): tf.Tensor[] {
  if (hasFusedKernel(FLAT_SCATTER)) return tf.engine().runKernel(FLAT_SCATTER, { x }, { sizes }) as tf.Tensor[];
  return tf.split(
    tf.slice(
      x,
      0,
      sizes.reduce((a, b) => a + b, 0),
    ),
    sizes,
  );
}

/**
 * s' [3N] from g [N], s [3N] and p [N], the parameters, where s's θ part is not theirs:
 * ADAM_UPDATE_FLAT's one dispatch, else adam.ts's update on flat vectors.
 */
function updateFlat(g: tf.Tensor1D, s: tf.Tensor1D, a: AdamAttrs, p?: tf.Tensor1D, ok?: tf.Tensor, scale?: tf.Tensor) {
  if (hasFusedKernel(ADAM_UPDATE_FLAT)) {
    const inputs = { ...(p ? { p } : {}), g, s, ...(ok ? { ok } : {}), ...(scale ? { scale } : {}) };
    return tf.engine().runKernel(ADAM_UPDATE_FLAT, inputs, { ...a }) as tf.Tensor1D;
  }
  const n = g.size;
  p ??= tf.slice(s, 0, n);
  const okOfN = ok && tf.broadcastTo(ok, [n]);
  const gate = okOfN && { ok: ok!, okLike: () => okOfN };
  const [m, v] = [tf.slice(s, n, n), tf.slice(s, 2 * n, n)];
  return tf.concat(adamUpdate(p, scale ? tf.mul(g, scale) : g, m, v, a, gate)) as tf.Tensor1D;
}

export class FlatAdam {
  /** Number of updates applied so far (t). */
  step = 0;
  /** The parameters' groups, laid out by the first update or restore, and each group's θ | m | v [3N]. */
  private groups?: Group[];
  private states: (tf.Tensor1D | undefined)[] = [];
  /**
   * Each group's parameters' data as its last update left them, when its state's θ part is theirs:
   * an update then reads θ there instead of gathering it. Anything else that assigns a parameter
   * (a resume, a restore) gives it other data, and the next update gathers again.
   */
  private scattered: (tf.DataId[] | undefined)[] = [];

  /** `most`: the values a group may hold (by default what one GPU buffer binding allows). */
  constructor(
    readonly opts: AdamOptions = PAPER_ADAM,
    private readonly most = groupLimit(),
  ) {}

  /** The groups of `vars`: the first update's, which every later one must name in the same order. */
  private laidOut(vars: tf.Variable[]): Group[] {
    const known = this.groups?.flatMap((g) => g.vars);
    if (!known) return (this.groups = groupsOf(vars, this.most));
    if (known.length !== vars.length || vars.some((p, i) => known[i] !== p))
      throw new Error('flat Adam: the parameters differ from those its state was laid out for');
    return this.groups!;
  }

  /**
   * The gradients of `vars` (in their order) end to end, a vector [N] a group, as apply reads them:
   * the step's gradients from then on (gradientIn reads one back).
   */
  lay(vars: tf.Variable[], grads: tf.Tensor[]): tf.Tensor1D[] {
    if (grads.length !== vars.length)
      throw new Error(`flat Adam: ${grads.length} gradients for ${vars.length} parameters`);
    const index = new Map(vars.map((v, i) => [v, i]));
    return this.laidOut(vars).map((group) => flatGather(group.vars.map((v) => grads[index.get(v)!]!)));
  }

  /** p's gradient [p's shape] in lay's vectors: a new tensor sliced from its group's. */
  gradientIn(laid: tf.Tensor1D[], p: tf.Tensor): tf.Tensor {
    const i = (this.groups ?? []).findIndex((g) => g.at.has(p as tf.Variable));
    if (i < 0 || !laid[i]) throw new Error('flat Adam: the tensor is not among the laid parameters');
    return tf.reshape(tf.slice(laid[i]!, this.groups![i]!.at.get(p as tf.Variable)!, p.size), p.shape);
  }

  /**
   * adam.ts's apply, a dispatch a group: each variable must have its gradient in `grads`, or, with
   * `laid` (lay's vectors of the gradients), there.
   */
  apply(
    vars: tf.Variable[],
    grads: tf.NamedTensorMap,
    lr: number,
    ok?: tf.Tensor,
    scale?: tf.Tensor,
    laid?: tf.Tensor1D[],
  ): void {
    const missing = laid ? undefined : vars.find((p) => !grads[p.name]);
    if (missing) throw new Error(`flat Adam: no gradient for "${missing.name}"`);
    const groups = this.laidOut(vars);
    if (laid && laid.length !== groups.length)
      throw new Error(`flat Adam: ${laid.length} laid gradients for ${groups.length} groups`);
    this.step++;
    const attrs = adamAttrs(this.opts, this.step, lr);
    groups.forEach((group, i) => {
      const next = tf.tidy(() => {
        const theirs = this.scattered[i]?.every((id, k) => group.vars[k]!.dataId === id);
        const p = theirs ? undefined : flatGather(group.vars); // [N]
        const g = laid?.[i] ?? flatGather(group.vars.map((v) => grads[v.name]!)); // [N]
        const s = updateFlat(g, this.states[i] ?? tf.zeros([3 * group.n]), attrs, p, ok, scale); // [3N]
        const pieces = flatScatter(
          s,
          group.vars.map((v) => v.size),
        );
        group.vars.forEach((v, k) => v.assign(tf.reshape(pieces[k]!, v.shape)));
        return s;
      });
      this.scattered[i] = group.vars.map((v) => v.dataId);
      this.states[i]?.dispose();
      this.states[i] = tf.keep(next); // the caller's tidy (train/step.ts) would dispose it
    });
  }

  /** adam.ts's keep: the parameters, the states and t as they are now, without copies. */
  keep(vars: tf.Variable[]): { restore(): void; dispose(): void } {
    const step = this.step;
    const groups = this.groups;
    const values = vars.map((p) => tf.clone(p));
    const states = this.states.map((s) => s && tf.clone(s));
    const kept = [...values, ...states.filter((s) => s !== undefined)];
    return {
      restore: () => {
        this.step = step;
        vars.forEach((p, i) => p.assign(values[i]!));
        this.states.forEach((s) => s?.dispose());
        this.states = states.map((s) => s && tf.keep(tf.clone(s)));
        this.groups = groups;
      },
      dispose: () => tf.dispose(kept),
    };
  }

  /** adam.ts's state: the moments as plain arrays under PyTorch's names, a download a group. */
  async state(named: [string, tf.Variable][]): Promise<AdamState> {
    const out: AdamState = new Map();
    for (const [i, group] of (this.groups ?? []).entries()) {
      const s = this.states[i];
      if (!s) continue;
      const all = (await s.data()) as Float32Array;
      const part = (k: number, p: tf.Variable) =>
        all.slice(k * group.n + group.at.get(p)!, k * group.n + group.at.get(p)! + p.size);
      for (const [name, p] of named) {
        if (!group.at.has(p)) continue;
        out.set(`${name}.exp_avg`, { shape: p.shape, data: part(1, p) });
        out.set(`${name}.exp_avg_sq`, { shape: p.shape, data: part(2, p) });
      }
    }
    return out;
  }

  /** adam.ts's restore: the states laid out in `named`'s order, θ's part zero (each update gathers θ). */
  restore(named: [string, tf.Variable][], step: number, state: AdamState, source: string): void {
    const groups = groupsOf(
      named.map(([, p]) => p),
      this.most,
    );
    const moments = new Map(named.map(([name, p]) => [p, savedMoments(state, name, p, source)]));
    this.dispose();
    this.step = step;
    this.groups = groups;
    this.states = groups.map((group) => {
      const all = new Float32Array(3 * group.n);
      for (const p of group.vars) {
        const { m, v } = moments.get(p)!;
        all.set(m, group.n + group.at.get(p)!);
        all.set(v, 2 * group.n + group.at.get(p)!);
      }
      return tf.keep(tf.tensor1d(all));
    });
  }

  dispose(): void {
    this.states.forEach((s) => s?.dispose());
    this.states = [];
    this.scattered = [];
    this.groups = undefined;
  }
}
