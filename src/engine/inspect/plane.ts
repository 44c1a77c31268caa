/**
 * A 2-D basis fitted once and reused: PCA (ml-pca, centred, not scaled) or seeded UMAP (umap-js).
 * The global view (globalView.ts) fits it at the basis step and places every other step's vectors
 * with it, so moving the step slider moves points, not axes.
 */
import { PCA } from 'ml-pca';
import { UMAP } from 'umap-js';
import type { Projection2D } from '../../protocol/globalView';
import { mulberry32 } from '../data/random';

export interface Plane {
  projection: Projection2D;
  /** Rows [n, dim] → x and y. */
  place(rows: number[][]): { x: number[]; y: number[] };
  /** PCA: the variance share of each axis. */
  explained?: number[];
  /** The fitted rows' own coordinates (UMAP's embedding; PCA's projection). */
  fitted: { x: number[]; y: number[] };
}

/** Rows of a row-major [n, dim] buffer. */
export function rowsOf(values: Float32Array, dim: number): number[][] {
  return Array.from({ length: values.length / dim }, (_, i) => Array.from(values.subarray(i * dim, (i + 1) * dim)));
}

const columns = (m: number[][]) => ({ x: m.map((r) => r[0] ?? 0), y: m.map((r) => r[1] ?? 0) });

/**
 * PCA's first two principal axes of `rows`. An axis's sign is arbitrary; here it is fixed so that
 * its largest loading (by magnitude, first on a tie) is positive, so a refit gives the same picture.
 */
export function fitPca(rows: number[][]): Plane {
  const dim = rows[0]?.length ?? 0;
  if (rows.length < 2 || dim < 1) throw new RangeError(`PCA needs at least 2 vectors, got ${rows.length}`);
  const pca = new PCA(rows, { center: true, scale: false });
  const vectors = pca.getEigenvectors().to2DArray(); // [dim, components]
  const components = Math.min(2, vectors[0]!.length);
  const axes = Array.from({ length: components }, (_, a) => vectors.map((r) => r[a]!));
  const signs = axes.map((axis) => {
    let big = 0;
    for (let i = 1; i < axis.length; i++) if (Math.abs(axis[i]!) > Math.abs(axis[big]!)) big = i;
    return axis[big]! < 0 ? -1 : 1;
  });
  const means = rows[0]!.map((_, c) => rows.reduce((s, r) => s + r[c]!, 0) / rows.length);
  const place = (m: number[][]) => {
    const x: number[] = [];
    const y: number[] = [];
    for (const r of m) {
      const at = (a: number) =>
        a < components ? signs[a]! * axes[a]!.reduce((s, w, c) => s + w * (r[c]! - means[c]!), 0) : 0;
      x.push(at(0));
      y.push(at(1));
    }
    return { x, y };
  };
  const variance = pca.getExplainedVariance();
  return {
    projection: 'pca',
    place,
    explained: [variance[0] ?? 0, variance[1] ?? 0],
    fitted: place(rows),
  };
}

/** UMAP of `rows`, seeded (mulberry32): the same rows and seed give the same picture; others are placed by its transform. */
export function fitUmap(rows: number[][], seed = 1): Plane {
  const umap = new UMAP({ nComponents: 2, nNeighbors: Math.min(15, rows.length - 1), random: mulberry32(seed) });
  const fitted = columns(umap.fit(rows));
  return { projection: 'umap', place: (m) => columns(umap.transform(m)), fitted };
}

export function fitPlane(projection: Projection2D, rows: number[][]): Plane {
  return projection === 'umap' ? fitUmap(rows) : fitPca(rows);
}
