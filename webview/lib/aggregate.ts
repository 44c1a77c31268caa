/**
 * Attention summed up across heads and layers (no DOM): the mean over a layer's heads, the mean
 * over every layer and head, and, through the encoder's self-attention, attention rollout and
 * attention flow (Abnar & Zuidema 2020), with the residual connection as ½·A + ½·I.
 *
 * Maps are row-major: `maps` holds [layers, heads, n, n] (queries × keys) as the protocol does.
 */

/** The mean of a layer's heads: [n_q, n_k]. */
export function meanOverHeads(maps: ArrayLike<number>, shape: readonly number[], layer: number): Float32Array {
  const [, heads, q, k] = shape as [number, number, number, number];
  const out = new Float32Array(q * k);
  for (let h = 0; h < heads; h++) {
    const base = (layer * heads + h) * q * k;
    for (let i = 0; i < q * k; i++) out[i] += maps[base + i] / heads;
  }
  return out;
}

/** The mean over every layer and head: [n_q, n_k]. */
export function meanOverLayers(maps: ArrayLike<number>, shape: readonly number[]): Float32Array {
  const [layers, , q, k] = shape as [number, number, number, number];
  const out = new Float32Array(q * k);
  for (let l = 0; l < layers; l++) {
    const m = meanOverHeads(maps, shape, l);
    for (let i = 0; i < q * k; i++) out[i] += m[i] / layers;
  }
  return out;
}

/** ½·A + ½·I of each layer's mean over heads: how much of a token's next state comes from each token. */
export function residualAttention(maps: ArrayLike<number>, shape: readonly number[]): Float64Array[] {
  const [layers, , n] = shape as [number, number, number, number];
  return Array.from({ length: layers }, (_, l) => {
    const m = meanOverHeads(maps, shape, l);
    const a = new Float64Array(n * n);
    for (let i = 0; i < n * n; i++) a[i] = 0.5 * m[i];
    for (let i = 0; i < n; i++) a[i * n + i] += 0.5;
    return a;
  });
}

/**
 * Attention rollout: R = Ã_L ··· Ã_2 · Ã_1 with Ã_l = ½·A_l + ½·I; row i says how much the top
 * layer's token i draws on each input token, through every path. [n, n].
 */
export function attentionRollout(maps: ArrayLike<number>, shape: readonly number[]): Float32Array {
  const n = shape[2]!;
  const layers = residualAttention(maps, shape);
  let r = layers[0]!;
  for (const a of layers.slice(1)) {
    const next = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let m = 0; m < n; m++) s += a[i * n + m]! * r[m * n + j]!;
        next[i * n + j] = s;
      }
    r = next;
  }
  return Float32Array.from(r);
}

/** Inputs longer than this get no flow (n² max-flows on a graph of (L+1)·n nodes). */
export const FLOW_MAX_TOKENS = 64;

/**
 * Attention flow: the maximum flow from input token j (layer 0) to top-layer token i through the
 * graph whose edge (l−1, m) → (l, i) has capacity Ã_l[i, m]. [n, n], or null past FLOW_MAX_TOKENS.
 */
export function attentionFlow(maps: ArrayLike<number>, shape: readonly number[]): Float32Array | null {
  const n = shape[2]!;
  if (n > FLOW_MAX_TOKENS) return null;
  const layers = residualAttention(maps, shape);
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i * n + j] = maxFlow(layers, n, j, i);
  return out;
}

/**
 * Edmonds–Karp on the layered graph: node (l, t) is l·n + t; residual capacities are kept per
 * edge in both directions (forward cap[l][i·n + m] for (l−1, m) → (l, i), and the flow sent back).
 */
function maxFlow(layers: Float64Array[], n: number, from: number, to: number): number {
  const L = layers.length;
  const cap = layers.map((a) => Float64Array.from(a)); // cap[l−1][i·n + m]: (l−1, m) → (l, i)
  const back = layers.map(() => new Float64Array(n * n)); // flow sent, usable backwards
  let total = 0;
  for (;;) {
    // Breadth-first search for a path (0, from) → (L, to); prev holds the node each came from.
    const prev = new Int32Array((L + 1) * n).fill(-1);
    const start = from;
    prev[start] = start;
    const queue = [start];
    while (queue.length && prev[L * n + to] < 0) {
      const node = queue.shift()!;
      const l = Math.floor(node / n);
      const t = node % n;
      if (l < L)
        for (let i = 0; i < n; i++) {
          const next = (l + 1) * n + i;
          if (prev[next] < 0 && cap[l]![i * n + t]! > 1e-12) {
            prev[next] = node;
            queue.push(next);
          }
        }
      if (l > 0)
        for (let m = 0; m < n; m++) {
          const next = (l - 1) * n + m;
          if (prev[next] < 0 && back[l - 1]![t * n + m]! > 1e-12) {
            prev[next] = node;
            queue.push(next);
          }
        }
    }
    if (prev[L * n + to] < 0) return total;
    // The bottleneck along the path, then push it.
    let push = Infinity;
    for (let v = L * n + to; v !== start; v = prev[v]!) push = Math.min(push, residual(v, prev[v]!));
    for (let v = L * n + to; v !== start; v = prev[v]!) send(v, prev[v]!, push);
    total += push;
  }

  function residual(v: number, u: number): number {
    const [lu, tu, lv, tv] = [Math.floor(u / n), u % n, Math.floor(v / n), v % n];
    return lv === lu + 1 ? cap[lu]![tv * n + tu]! : back[lv]![tu * n + tv]!;
  }
  function send(v: number, u: number, f: number): void {
    const [lu, tu, lv, tv] = [Math.floor(u / n), u % n, Math.floor(v / n), v % n];
    if (lv === lu + 1) {
      cap[lu]![tv * n + tu] -= f;
      back[lu]![tv * n + tu] += f;
    } else {
      back[lv]![tu * n + tv] -= f;
      cap[lv]![tu * n + tv] += f;
    }
  }
}
