/** SELF_ATTENTION, CROSS_ATTENTION and ATTENTION_GRAD on webgpu (to be written). */
export function registerWebgpuAttention(): void {}
