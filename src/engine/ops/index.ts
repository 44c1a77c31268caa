/**
 * Which ops a forward pass runs, chosen once per pass (ModelOps, modelOps.ts): the fused decoding
 * kernels when asked for outside training and recording; the training kernels where the backend
 * has them and the pass keeps no weights or head outputs and gates no heads; else plain tfjs ops.
 */
import { hasTrainingKernels } from '../backend/trainingOps';
import type { ForwardContext } from '../model/context';
import { blockOps } from './block';
import { decodingOps } from './decoding';
import type { ModelOps } from './modelOps';
import { plainOps } from './plain';

export { blockOps, decodingOps, plainOps };
export type { AttentionCall, ModelOps } from './modelOps';

export function opsFor(ctx: ForwardContext): ModelOps {
  if (ctx.ops) return ctx.ops;
  const keeps = !!ctx.record || !!ctx.recordHeads || !!ctx.recordInputs;
  if (ctx.fused) return ctx.training || keeps ? plainOps : decodingOps;
  return keeps || ctx.heads || !hasTrainingKernels() ? plainOps : blockOps;
}
