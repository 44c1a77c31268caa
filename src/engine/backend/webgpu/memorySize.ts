/**
 * How much memory the GPU under webgpu has, and where that figure came from (issue 28). WebGPU does
 * not say: the `webgpu` package's Dawn offers no memory heaps (its adapters list no
 * `dawn-adapter-properties-memory-heaps` feature, not even with the toggle `allow_unsafe_apis`, and
 * GPUAdapterInfo has no `memoryHeaps`), so the size is, in this order:
 * 1. the user's setting ATTENTION_DEBUGGER_GPU_MEMORY (GiB; the CLI's --gpu-memory sets it);
 * 2. the adapter's memory heaps, should a later Dawn report them (`info.memoryHeaps`);
 * 3. on a software adapter (lavapipe, SwiftShader) this machine's memory, which its buffers live in;
 * 4. `nvidia-smi --query-gpu=memory.total` where it is installed (2 s at most, never required);
 * else it is not known, and only the adapter's buffer limits are checked.
 */
import { spawnSync } from 'node:child_process';
import { totalmem } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';

export const GPU_MEMORY_ENV = 'ATTENTION_DEBUGGER_GPU_MEMORY';

/** The GPU's memory in bytes, and where the figure came from ("nvidia-smi"); bytes undefined when unknown. */
export interface GpuMemorySize {
  bytes: number | undefined;
  source: string;
}

interface AdapterMemory {
  software: boolean;
  /** Bytes of the device-local heaps, when the adapter reports heaps. */
  heaps?: number;
}
let noted: AdapterMemory = { software: false };

/** Records what the adapter says of its memory (backend/index.ts, as Dawn gives the adapter). */
export function noteAdapterMemory(info: {
  architecture?: string;
  description?: string;
  isFallbackAdapter?: boolean;
  memoryHeaps?: { size: number; properties: number }[];
}): void {
  const DEVICE_LOCAL = 1; // wgpu::HeapProperty::DeviceLocal
  const heaps = info.memoryHeaps?.filter((h) => h.properties & DEVICE_LOCAL).reduce((s, h) => s + Number(h.size), 0);
  noted = {
    software:
      !!info.isFallbackAdapter ||
      info.architecture === 'software' ||
      /llvmpipe|swiftshader|lavapipe/i.test(String(info.description ?? '')),
    ...(heaps ? { heaps } : {}),
  };
}

let smi: number | null | undefined; // MiB, null when nvidia-smi gave nothing

/** The smallest memory.total nvidia-smi reports, in bytes; undefined where it is missing or fails. */
function nvidiaSmiBytes(): number | undefined {
  if (smi === undefined) {
    const r = spawnSync('nvidia-smi', ['--query-gpu=memory.total', '--format=csv,noheader,nounits'], {
      encoding: 'utf8',
      timeout: 2000,
    });
    const mib =
      r.status === 0
        ? r.stdout
            .split('\n')
            .map(Number)
            .filter((n) => n > 0)
        : [];
    smi = mib.length ? Math.min(...mib) : null;
  }
  return smi === null ? undefined : smi * 2 ** 20;
}

/** The GPU's memory size and its source (see the file's comment). Throws on a malformed setting. */
export function gpuMemorySize(env: NodeJS.ProcessEnv = process.env): GpuMemorySize {
  const setting = env[GPU_MEMORY_ENV];
  if (setting !== undefined && setting !== '') {
    const gib = Number(setting);
    if (!(gib > 0) || !Number.isFinite(gib))
      throw new Error(`${GPU_MEMORY_ENV}: "${setting}" is not a size in GiB; give a positive number, e.g. 80`);
    return { bytes: gib * 2 ** 30, source: `--gpu-memory (${GPU_MEMORY_ENV})` };
  }
  if (noted.heaps) return { bytes: noted.heaps, source: "the adapter's memory heaps" };
  if (noted.software)
    return { bytes: totalmem(), source: "this machine's memory, where a software adapter's buffers live" };
  const smiBytes = nvidiaSmiBytes();
  if (smiBytes) return { bytes: smiBytes, source: 'nvidia-smi' };
  return {
    bytes: undefined,
    source: `not known (WebGPU does not tell it; set ${GPU_MEMORY_ENV} or --gpu-memory to the GPU's GiB)`,
  };
}

/** The active webgpu device's buffer limits; undefined off webgpu. */
export function gpuBufferLimits(): { maxBufferSize: number; maxStorageBufferBindingSize: number } | undefined {
  if (tf.getBackend() !== 'webgpu') return undefined;
  const { limits } = (tf.backend() as unknown as { device: { limits: Record<string, number> } }).device;
  return { maxBufferSize: limits.maxBufferSize!, maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize! };
}
