/**
 * Which layout of Adam's moments a run trains with: one pair of tensors a parameter (adam.ts) or all
 * of them end to end (flatAdam.ts), the same update bit for bit. Flat where the backend has its
 * one-dispatch kernel (webgpu), per parameter elsewhere (wasm's native update is one call a
 * parameter already, and the flat layout would only add copies); ATTENTION_DEBUGGER_ADAM=flat or
 * per-parameter chooses either on any backend, for a test or a bench.
 */
import { ADAM_UPDATE_FLAT, hasFusedKernel } from '../backend/fusedKernels';
import { Adam } from './adam';
import { FlatAdam } from './flatAdam';

/**
 * What a training step and the trainer ask of Adam, in either layout: FlatAdam's apply (adam.ts's,
 * which reads `laid` if given: the layout's own `lay` of these gradients), and where the layout lays
 * gradients out, `lay` (the step sums their squares for the global norm there and hands them to
 * apply, gathered once) and `gradientIn` (one parameter's gradient read back from them).
 */
export type Optimizer = Pick<Adam, 'step' | 'opts' | 'keep' | 'state' | 'restore' | 'dispose'> &
  Pick<FlatAdam, 'apply'> &
  Partial<Pick<FlatAdam, 'lay' | 'gradientIn'>>;

export const ADAM_ENV = 'ATTENTION_DEBUGGER_ADAM';
const LAYOUTS = ['flat', 'per-parameter'] as const;

export type AdamLayout = (typeof LAYOUTS)[number];

/** The layout ADAM_ENV names, or the active backend's default; throws, naming the variable, on another value. */
export function adamLayout(env: NodeJS.ProcessEnv = process.env): AdamLayout {
  const value = env[ADAM_ENV] || (hasFusedKernel(ADAM_UPDATE_FLAT) ? 'flat' : 'per-parameter');
  if (!(LAYOUTS as readonly string[]).includes(value))
    throw new Error(`${ADAM_ENV}: unknown value "${value}" (expected ${LAYOUTS.join(' or ')})`);
  return value as AdamLayout;
}

/** Adam with the paper's options in adamLayout's layout. */
export function createOptimizer(env: NodeJS.ProcessEnv = process.env): Optimizer {
  return adamLayout(env) === 'flat' ? new FlatAdam() : new Adam();
}
