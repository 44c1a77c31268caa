/**
 * Which GEMM the webgpu kernels' products use (linear.ts's LINEAR and LINEAR_GRAD): tfjs's own
 * (program.ts tfjsMatMul, the default) or ours (gemm.ts). The environment variable
 * ATTENTION_DEBUGGER_GEMM=own|tfjs is read once, when the webgpu backend loads (backend/index.ts);
 * setOwnGemm switches it for a test or a bench. tfjs's stays the default until ours is measured on a GPU.
 */
import { gemm } from './gemm';
import { type MatMul, tfjsMatMul } from './program';

export const GEMM_ENV = 'ATTENTION_DEBUGGER_GEMM';
const CHOICES = ['tfjs', 'own'] as const;

let own = false;

/** Uses our GEMM (true) or tfjs's (false) in the webgpu kernels from now on. */
export function setOwnGemm(on: boolean): void {
  own = on;
}

/** Whether the webgpu kernels use our GEMM. */
export const usesOwnGemm = (): boolean => own;

/** Reads GEMM_ENV (unset or empty: tfjs) and applies it; throws, naming the variable, on another value. */
export function gemmFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  const value = env[GEMM_ENV] || 'tfjs';
  if (!(CHOICES as readonly string[]).includes(value))
    throw new Error(`${GEMM_ENV}: unknown value "${value}" (expected ${CHOICES.join(' or ')})`);
  setOwnGemm(value === 'own');
}

/** MatMul with the chosen GEMM. */
export const matMul: MatMul = (backend, a, b, transposeA, transposeB, bias, relu = false) =>
  (own ? gemm : tfjsMatMul)(backend, a, b, transposeA, transposeB, bias, relu);
