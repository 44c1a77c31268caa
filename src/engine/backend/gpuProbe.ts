/**
 * Which GPU adapter Dawn (the `webgpu` package) finds, asked in a short child process: the
 * automatic backend choice loads Dawn into the engine only when there is a hardware adapter, so a
 * machine without a GPU neither pays for Dawn nor sees its warnings on stderr. The answer also
 * names the adapter for `engine/info`.
 */
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export interface GpuAdapter {
  vendor: string;
  architecture: string;
  /** The device's name (Dawn: `NVIDIA H100 80GB HBM3`, `llvmpipe-…`). */
  device: string;
  /** The driver, as Dawn describes it (Vulkan: `<driver name>: <driver info>`). */
  description: string;
  /** A software rasterizer (llvmpipe, SwiftShader): slower than wasm on a CPU. */
  software: boolean;
}

export type GpuProbe = { adapter: GpuAdapter } | { adapter: null; why: string };

const PROBE = `
import(process.argv[1]).then(async (w) => {
  const adapter = await w.create([]).requestAdapter();
  const i = adapter?.info ?? {};
  process.stdout.write(JSON.stringify(adapter ? {
    vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '', description: i.description ?? '',
    software: !!i.isFallbackAdapter || i.architecture === 'software' || /llvmpipe|swiftshader|lavapipe/i.test(i.description ?? ''),
  } : null));
  process.exit(0);
}, (err) => { process.stdout.write(JSON.stringify({ error: String(err && err.message || err) })); process.exit(0); });
`;

let cached: GpuProbe | undefined;

export function probeGpu(): GpuProbe {
  if (cached) return cached;
  let entry: string;
  try {
    entry = pathToFileURL(require.resolve('webgpu')).href;
  } catch {
    return (cached = { adapter: null, why: 'the webgpu package (Dawn) is not installed' });
  }
  const r = spawnSync(process.execPath, ['-e', PROBE, entry], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  let answer: (GpuAdapter & { error?: string }) | null = null;
  try {
    answer = JSON.parse(r.stdout || 'null');
  } catch {
    return (cached = { adapter: null, why: `the Dawn probe said: ${(r.stdout || r.stderr).slice(0, 200)}` });
  }
  if (r.error) return (cached = { adapter: null, why: `the Dawn probe failed: ${r.error.message}` });
  if (answer?.error) return (cached = { adapter: null, why: `Dawn did not load: ${answer.error}` });
  if (!answer)
    return (cached = {
      adapter: null,
      why: 'Dawn found no GPU adapter (no Vulkan/Metal/D3D12 device; on a CPU-only machine, Mesa lavapipe ≥ 25 and VK_ICD_FILENAMES give a software one)',
    });
  return (cached = { adapter: answer });
}

/** The adapter in a line: `nvidia hopper, NVIDIA H100 80GB HBM3, driver NVIDIA: 580.159.04`, or why there is none. */
export function describeAdapter(p: GpuProbe): string {
  if (!p.adapter) return p.why;
  const a = p.adapter;
  const name = [a.vendor, a.architecture].filter(Boolean).join(' ') || 'unknown adapter';
  const parts = [name, a.device, a.description && `driver ${a.description}`, a.software && 'software'];
  return parts.filter(Boolean).join(', ');
}

/**
 * Why the automatic backend choice passes webgpu over, or null when it takes it: a hardware adapter
 * is taken; a software rasterizer (llvmpipe, ~3 GFLOP/s on two cores against ~14 for wasm) is not,
 * though forcing webgpu still uses it.
 */
export function whyNotAutoWebgpu(p: GpuProbe): string | null {
  if (!p.adapter) return p.why;
  return p.adapter.software ? `only a software adapter (${describeAdapter(p)}); force it with --backend webgpu` : null;
}
