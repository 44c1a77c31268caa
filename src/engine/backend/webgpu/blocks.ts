/**
 * The block kernels other than attention on webgpu (trainingOps.ts's names, registered apart from
 * wasm's): dropout (dropout.ts), the linear map and its gradient (linear.ts), LayerNorm with and
 * without the residual and dropout, and its gradient (layerNorm.ts). With attention.ts, a training
 * step on webgpu runs one kernel per block each way, the gradients being trainingOps.ts's.
 */
import { LINEAR } from '../inferenceOps';
import { addKernel } from '../kernels';
import { DROPOUT, DROPOUT_ADD_NORM, LAYER_NORM, LINEAR_GRAD, NORM_GRAD } from '../trainingOps';
import { dropoutKernel } from './dropout';
import { addLayerNormKernel, normGradKernel } from './layerNorm';
import { linearGradKernel, linearKernel } from './linear';

/** DROPOUT, LINEAR, LINEAR_GRAD, DROPOUT_ADD_NORM, LAYER_NORM and NORM_GRAD on webgpu. Idempotent. */
export function registerWebgpuBlocks(): void {
  addKernel(DROPOUT, 'webgpu', dropoutKernel);
  addKernel(LINEAR, 'webgpu', linearKernel);
  addKernel(LINEAR_GRAD, 'webgpu', linearGradKernel);
  addKernel(DROPOUT_ADD_NORM, 'webgpu', addLayerNormKernel);
  addKernel(LAYER_NORM, 'webgpu', addLayerNormKernel);
  addKernel(NORM_GRAD, 'webgpu', normGradKernel);
}
