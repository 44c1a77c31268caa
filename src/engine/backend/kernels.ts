/**
 * Registering and replacing tfjs kernels, shared by wasm/ and webgpu/. A kernel may be replaced in
 * layers (BatchMatMul: the transpose fix, then OpenBLAS over it); each layer names
 * itself, and the names travel with the registered function, so registering again is a no-op.
 */
import * as tf from '@tensorflow/tfjs-core';

export type KernelFunc = tf.KernelConfig['kernelFunc'];

/** What the engine's wasm kernels use of tfjs-backend-wasm's backend object. */
export type WasmBackend = tf.KernelBackend & {
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array | Int32Array;
  disposeData(dataId: tf.DataId): boolean;
  incRef(dataId: tf.DataId): void;
};

export const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

/** A float32 tensor's values as a view of the wasm heap (taken after any makeOutput: growing the heap detaches views). */
export const f32 = (b: WasmBackend, t: tf.TensorInfo): Float32Array => b.typedArrayFromHeap(t) as Float32Array;

const LAYERS = Symbol.for('attention-debugger.kernel-layers');
type Layered = KernelFunc & { [LAYERS]?: ReadonlySet<string> };

/** Replaces `kernelName` on `backendName` with make(the current one), once per `layer`. */
export function overrideKernel(
  kernelName: string,
  backendName: string,
  layer: string,
  make: (inner: KernelFunc) => KernelFunc,
): void {
  const kernel = tf.getKernel(kernelName, backendName);
  if (!kernel) throw new Error(`tfjs-backend-${backendName} has no ${kernelName} kernel: unexpected tfjs version`);
  const below = (kernel.kernelFunc as Layered)[LAYERS] ?? new Set<string>();
  if (below.has(layer)) return;
  const func = make(kernel.kernelFunc) as Layered;
  func[LAYERS] = new Set([...below, layer]);
  tf.unregisterKernel(kernelName, backendName);
  tf.registerKernel({ ...kernel, kernelFunc: func });
}

/** Registers a kernel the backend does not have (idempotent). */
export function addKernel(kernelName: string, backendName: string, kernelFunc: KernelFunc): void {
  if (!tf.getKernel(kernelName, backendName)) tf.registerKernel({ kernelName, backendName, kernelFunc });
}
