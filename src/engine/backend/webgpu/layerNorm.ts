/**
 * LayerNorm on webgpu, forward and backward, as native/norm.c does it on wasm:
 * - DROPOUT_ADD_NORM: LayerNorm(x + Dropout(r)) (post-LN, §3.1 and §5.4), the draws norm.c's;
 * - LAYER_NORM: LayerNorm(x) (pre-LN, and the stacks' final norms);
 * - NORM_GRAD: dx, dgain, dbias (and dr) of either.
 * With z = x + r ⊙ m (z = x without r), per row y = (z − μ)/√(σ² + ε) · gain + bias, σ² biased.
 * Each row is one workgroup: its threads stride over d and reduce μ and σ² in workgroup memory.
 * The backward pass draws the mask again and recomputes z, μ and σ² from its inputs (nothing is
 * kept between the passes): per row, with x̂ = (z − μ)/√(σ² + ε) and g = dy ⊙ gain,
 * dz = (g − mean(g) − x̂ · mean(g ⊙ x̂)) / √(σ² + ε), dx = dz, dr = dz ⊙ m; dgain = Σ rows dy ⊙ x̂,
 * dbias = Σ rows dy (column sums over rows, program.ts columnSum).
 */
import type * as tf from '@tensorflow/tfjs-core';
import { type KernelFunc, product } from '../kernels';
import {
  columnSum,
  disposeAll,
  DROPOUT_MASK,
  dropoutUniforms,
  perElement,
  REDUCE,
  runProgram,
  type Uniform,
  type WebgpuBackend,
} from './program';

/** Threads per row. */
const ROW_WORKGROUP = 64;

interface NormAttrs {
  eps: number;
  rate?: number;
  seed?: number;
}

/** The uniforms and WGSL both passes share: z(k) for flat index k, and a row's μ and 1/√(σ² + ε). */
function normShared(x: tf.TensorInfo, residual: boolean, attrs: NormAttrs) {
  const d = x.shape[x.shape.length - 1]!;
  const n = d > 0 ? product(x.shape) / d : 0;
  const uniforms: Uniform[] = [
    { name: 'rows', type: 'i32', value: n },
    { name: 'd', type: 'i32', value: d },
    { name: 'eps', type: 'f32', value: attrs.eps },
    ...(residual ? dropoutUniforms(attrs.rate ?? 0, attrs.seed ?? 0) : []),
  ];
  // z as norm.c: x + r·m, m = scale or 0 (1 without dropout); element k's draw is its flat index.
  const zAt = `
    ${residual ? DROPOUT_MASK : ''}
    fn z(k : i32) -> f32 {
      return ${residual ? 'x[k] + r[k] * dropoutMask(u32(k))' : 'x[k]'};
    }`;
  const prelude = `${zAt}
    ${REDUCE}
    // Row \`row\`'s (μ, 1/√(σ² + ε)), σ² from a second pass over z − μ; call from uniform control flow.
    fn rowStats(row : i32, tid : i32) -> vec2<f32> {
      let valid = row < uniforms.rows; // a dispatch folded into y and z may run a few extra workgroups
      let base = row * uniforms.d;
      var sum = 0.0;
      if (valid) {
        for (var j = tid; j < uniforms.d; j = j + WG) {
          sum = sum + z(base + j);
        }
      }
      let mean = workgroupSum(sum, tid) / f32(uniforms.d);
      var dev = 0.0;
      if (valid) {
        for (var j = tid; j < uniforms.d; j = j + WG) {
          let c = z(base + j) - mean;
          dev = dev + c * c;
        }
      }
      return vec2<f32>(mean, 1.0 / sqrt(workgroupSum(dev, tid) / f32(uniforms.d) + uniforms.eps));
    }`;
  return { d, n, uniforms, zAt, prelude, key: residual ? 'residual' : 'plain' };
}

/** x [..., d] (+ r, same shape), gain [d], bias [d] → LayerNorm(x + Dropout(r)); attrs.eps (rate, seed). */
export const addLayerNormKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, r, gain, bias } = inputs as Record<'x' | 'gain' | 'bias', tf.TensorInfo> & { r?: tf.TensorInfo };
  const shared = normShared(x, !!r, attrs as unknown as NormAttrs);
  return runProgram(backend as WebgpuBackend, {
    key: `layernorm_${shared.key}`,
    inputs: r ? { x, r, gain, bias } : { x, gain, bias },
    outputShape: x.shape,
    workgroup: ROW_WORKGROUP,
    workgroups: shared.n,
    uniforms: shared.uniforms,
    prelude: shared.prelude,
    main: `
      let tid = i32(localIndex);
      let row = index / WG;
      let stats = rowStats(row, tid); // [μ, 1/√(σ² + ε)]
      if (row < uniforms.rows) {
        let base = row * uniforms.d;
        for (var j = tid; j < uniforms.d; j = j + WG) {
          result[base + j] = (z(base + j) - stats.x) * stats.y * gain[j] + bias[j];
        }
      }`,
  });
};

/** dy, x, r (DROPOUT_ADD_NORM; absent for LAYER_NORM), gain → dx, dgain, dbias, and dr with r */
export const normGradKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { dy, x, r, gain } = inputs as Record<'dy' | 'x' | 'gain', tf.TensorInfo> & { r?: tf.TensorInfo };
  const backend = be as WebgpuBackend;
  const { d, n, uniforms, zAt, prelude, key } = normShared(x, !!r, attrs as unknown as NormAttrs);
  const xr: Record<string, tf.TensorInfo> = r ? { x, r } : { x };
  // Per row (μ, 1/√(σ² + ε)): [n, 2]
  const stats = runProgram(backend, {
    key: `normstats_${key}`,
    inputs: xr,
    outputShape: [n, 2],
    workgroup: ROW_WORKGROUP,
    workgroups: n,
    uniforms,
    prelude,
    main: `
      let tid = i32(localIndex);
      let row = index / WG;
      let s = rowStats(row, tid);
      if (row < uniforms.rows && tid == 0) {
        result[2 * row] = s.x;
        result[2 * row + 1] = s.y;
      }`,
  });
  // dx = dz [..., d]: per row the means of g and g ⊙ x̂, then each element.
  const dx = runProgram(backend, {
    key: `normgrad_dx_${key}`,
    inputs: { dy, ...xr, gain, stats },
    outputShape: x.shape,
    workgroup: ROW_WORKGROUP,
    workgroups: n,
    uniforms,
    prelude: `${prelude}
      // row i's x̂ at flat index k
      fn xhatAt(i : i32, k : i32) -> f32 {
        return (z(k) - stats[2 * i]) * stats[2 * i + 1];
      }`,
    main: `
      let tid = i32(localIndex);
      let i = index / WG;
      let valid = i < uniforms.rows;
      let base = i * uniforms.d;
      var gSum = 0.0;
      var gxSum = 0.0;
      if (valid) {
        for (var j = tid; j < uniforms.d; j = j + WG) {
          let g = dy[base + j] * gain[j];
          gSum = gSum + g;
          gxSum = gxSum + g * xhatAt(i, base + j);
        }
      }
      let gMean = workgroupSum(gSum, tid) / f32(uniforms.d);
      let gxMean = workgroupSum(gxSum, tid) / f32(uniforms.d);
      if (valid) {
        let inv = stats[2 * i + 1];
        for (var j = tid; j < uniforms.d; j = j + WG) {
          let k = base + j;
          result[k] = (dy[k] * gain[j] - gMean - xhatAt(i, k) * gxMean) * inv;
        }
      }`,
  });
  const sums = { n, length: d, from: 0, count: d };
  const dgain = columnSum(backend, {
    key: `dgain_${key}`,
    inputs: { dy, ...xr, stats },
    ...sums,
    uniforms: uniforms.filter((u) => u.name !== 'rows'), // columnSum's n is the rows
    prelude: zAt,
    term: `dy[i * uniforms.d + c] * (z(i * uniforms.d + c) - stats[2 * i]) * stats[2 * i + 1]`,
  });
  const dbias = columnSum(backend, {
    key: 'dbias',
    inputs: { dy },
    ...sums,
    term: 'dy[i * uniforms.cols + c]',
  });
  const outs = [dx, dgain, dbias];
  if (r)
    // dr = dz ⊙ m (dz·0 where dropped, as norm.c)
    outs.push(
      runProgram(backend, {
        key: 'normgrad_dr',
        inputs: { dx },
        outputShape: r.shape,
        ...perElement(n * d),
        uniforms: uniforms.filter((u) => ['key', 'rate', 'scale'].includes(u.name)),
        prelude: DROPOUT_MASK,
        main: `
          if (index < uniforms.size) {
            result[index] = dx[index] * dropoutMask(u32(index));
          }`,
      }),
    );
  disposeAll(backend, [stats]);
  return outs;
};
