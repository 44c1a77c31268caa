// Bundles with esbuild. tfjs is bundled from its ESM entry (`module`): its CommonJS node bundle
// registers no gradients, and its ESM files use extensionless imports that Node cannot load.
// One bundled copy per process also means one tfjs engine. Only packages that must load at run
// time from disk stay external: `webgpu` (dawn.node), tfjs-node (optional, the user's), vscode.
//   node scripts/build.mjs          → dist/engine.js, dist/cli.js
//   node scripts/build.mjs --tests  → also out/test/**/*.test.js (one bundle per test file)
import * as esbuild from 'esbuild';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildWebview } from './build-webview.mjs';

export const external = ['webgpu', '@tensorflow/tfjs-backend-wasm/package.json', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'vscode'];
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  mainFields: ['module', 'main'],
  external,
  logLevel: 'warning',
};

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'fixtures' || name === 'vscode' ? [] : findTests(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

await esbuild.build({ ...common, entryPoints: { engine: 'src/engine/index.ts', cli: 'src/engine/cli/main.ts' }, outdir: 'dist' });
// The extension host side: vscode is provided by the host; it runs the engine as a child process.
await esbuild.build({ ...common, entryPoints: { extension: 'src/extension/extension.ts' }, outdir: 'dist' });
await buildWebview();
if (process.argv.includes('--tests')) {
  await esbuild.build({ ...common, entryPoints: findTests('test'), outdir: 'out/test', outbase: 'test' });
}
