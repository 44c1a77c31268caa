// What Dawn offers on this machine, for the GPU bench's log: the adapter as Engine Info names it, the
// backend the automatic choice takes,
// and the features the kernels could use (shader-f16, subgroups, subgroup matrices) and the limits
// that bound a batch.
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from '../lib/build.mjs';

const { probeGpu, describeAdapter, initBackend } = await loadEngine();
const probe = probeGpu();
console.log(`adapter (as Engine Info names it): ${describeAdapter(probe)}`);
if (!probe.adapter) process.exit(1);
console.log(`automatic backend choice: ${await initBackend()}`);
const webgpu = await import('webgpu');
const adapter = await webgpu.create([]).requestAdapter();
const wanted = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];
console.log(`features: ${wanted.map((f) => `${f} ${adapter.features.has(f) ? 'yes' : 'no'}`).join(', ')}`);
const matrices = adapter.info.subgroupMatrixConfigs ?? [];
console.log(`subgroup matrix configs: ${matrices.length ? JSON.stringify(matrices) : 'none'}`);
const limits = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize'];
console.log(`limits: ${limits.map((l) => `${l} ${adapter.limits[l]}`).join(', ')}`);
process.exit(0);
