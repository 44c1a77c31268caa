/** DROPOUT, LINEAR, LINEAR_GRAD, DROPOUT_ADD_NORM, LAYER_NORM and NORM_GRAD on webgpu (to be written). */
export function registerWebgpuBlocks(): void {}
