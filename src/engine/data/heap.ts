// A binary max-heap of (count, key) entries with a caller-supplied order; used by BPE learning as a
// lazy priority queue (stale entries are skipped by the caller when popped).

export class MaxHeap {
  private readonly counts: number[] = [];
  private readonly keys: number[] = [];

  /** before(ca, ka, cb, kb): true when entry a must come out before entry b. */
  constructor(private readonly before: (ca: number, ka: number, cb: number, kb: number) => boolean) {}

  get size(): number {
    return this.counts.length;
  }

  push(count: number, key: number): void {
    const c = this.counts;
    const k = this.keys;
    let i = c.length;
    c.push(count);
    k.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(count, key, c[p] as number, k[p] as number)) break;
      c[i] = c[p] as number;
      k[i] = k[p] as number;
      i = p;
    }
    c[i] = count;
    k[i] = key;
  }

  pop(): [number, number] | undefined {
    const c = this.counts;
    const k = this.keys;
    if (c.length === 0) return undefined;
    const top: [number, number] = [c[0] as number, k[0] as number];
    const lastC = c.pop() as number;
    const lastK = k.pop() as number;
    const n = c.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let m = l;
        if (r < n && this.before(c[r] as number, k[r] as number, c[l] as number, k[l] as number)) m = r;
        if (!this.before(c[m] as number, k[m] as number, lastC, lastK)) break;
        c[i] = c[m] as number;
        k[i] = k[m] as number;
        i = m;
      }
      c[i] = lastC;
      k[i] = lastK;
    }
    return top;
  }
}
