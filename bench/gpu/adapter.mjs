// What Dawn offers on this machine, for the GPU bench's log: the adapter as Engine Info names it, the
// backend the automatic choice takes,
// and the features the kernels could use (shader-f16, subgroups, subgroup matrices) and the limits
// that bound a batch, with and without Dawn's allow_unsafe_apis.
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from '../lib/build.mjs';
import { describeFeatures } from './adapterFeatures.mjs';

const { probeGpu, describeAdapter, initBackend } = await loadEngine();
const probe = probeGpu();
console.log(`adapter (as Engine Info names it): ${describeAdapter(probe)}`);
if (!probe.adapter) process.exit(1);
console.log(`automatic backend choice: ${await initBackend()}`);
const webgpu = await import('webgpu');
// Dawn offers subgroup matrices (the tensor cores) only under allow_unsafe_apis: both are listed.
for (const flags of [[], ['enable-dawn-features=allow_unsafe_apis']]) {
  const adapter = await webgpu.create(flags).requestAdapter();
  console.log(`with Dawn flags [${flags.join(' ')}]:`);
  if (!adapter) console.log('  no adapter');
  else for (const line of describeFeatures(adapter)) console.log(`  ${line}`);
}
process.exit(0);
