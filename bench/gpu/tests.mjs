// The engine tests run on the GPU (bench/gpu/run.sh tests): every one that runs the webgpu backend
// against an independent reference (the PyTorch fixtures, the unfused ops, the native kernels).
export const GPU_TESTS = [
  'engine/golden.test.ts',
  'engine/gradients.test.ts',
  'engine/train-step.test.ts',
  'engine/fused-loss.test.ts',
  'engine/dropout.test.ts',
  'engine/clipping.test.ts',
  'engine/leaks.test.ts',
  'engine/webgpu-attention.test.ts',
  'engine/webgpu-tiled-attention.test.ts',
  'engine/webgpu-blocks.test.ts',
  'engine/webgpu-gemm.test.ts',
  'engine/webgpu-gemm-engine.test.ts',
  'engine/webgpu-loss-adam.test.ts',
  'engine/webgpu-sum-of-squares.test.ts',
  'engine/adam-gate.test.ts',
  'engine/step-reads.test.ts',
  'engine/block-kernels.test.ts',
  'engine/backend.test.ts',
  'decode/greedy-step.test.ts',
];
