/**
 * The training kernels (backend/trainingOps.ts's names) on webgpu, as WGSL programs: the same block
 * pass that wasm runs natively, so that a step dispatches a kernel per block instead of tfjs's
 * dozens of small ones. Each file registers its kernels; their gradients are trainingOps.ts's, the
 * same on every backend. Idempotent; after tfjs-backend-webgpu is loaded.
 */
import { registerTrainingGradients } from '../trainingOps';
import { registerWebgpuAdam } from './adamUpdate';
import { registerWebgpuAttention } from './attention';
import { registerWebgpuAttentionGrad } from './attentionGrad';
import { registerWebgpuBlocks } from './blocks';
import { registerWebgpuCopies } from './copies';
import { registerWebgpuTiledAttentionGrad } from './flashBackward';
import { registerWebgpuTiledAttention } from './flashForward';
import { registerWebgpuLoss } from './loss';
import { registerWebgpuSumOfSquares } from './sumOfSquares';

export function registerWebgpuTrainingOps(): void {
  registerWebgpuAttention();
  registerWebgpuAttentionGrad();
  registerWebgpuTiledAttention();
  registerWebgpuTiledAttentionGrad();
  registerWebgpuBlocks();
  registerWebgpuLoss();
  registerWebgpuAdam();
  registerWebgpuCopies();
  registerWebgpuSumOfSquares();
  registerTrainingGradients();
}
