// Bundles with esbuild (options in esbuild-options.mjs):
//   node scripts/build.mjs          → dist/native/blas.node, dist/engine.js, dist/cli.js, dist/extension.js,
//                                     dist/debugAdapter.js, dist/webview/
//   node scripts/build.mjs --tests  → also out/test/**/*.test.js (one bundle per test file)
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildWebview } from './build-webview.mjs';
import { nodeBundle as common } from './esbuild-options.mjs';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'fixtures' || name === 'vscode' ? [] : findTests(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

// The OpenBLAS matMul addon (optional: without it the engine multiplies on wasm alone).
spawnSync(process.execPath, ['scripts/build-native.mjs'], { stdio: 'inherit' });
await esbuild.build({
  ...common,
  entryPoints: { engine: 'src/engine/index.ts', cli: 'src/engine/cli/main.ts' },
  outdir: 'dist',
});
// The extension host side: vscode is provided by the host; it runs the engine as a child process.
await esbuild.build({ ...common, entryPoints: { extension: 'src/extension/extension.ts' }, outdir: 'dist' });
// The debug adapter (src/debug/): its own process, which runs the engine beside it (dist/cli.js serve).
await esbuild.build({ ...common, entryPoints: { debugAdapter: 'src/debug/adapter.ts' }, outdir: 'dist' });
await buildWebview();
if (process.argv.includes('--tests')) {
  // Tests that drive dev tools (ESLint, the TypeScript compiler) load them from node_modules at run time.
  const tests = { ...common, external: [...common.external, 'eslint', 'typescript'] };
  await esbuild.build({ ...tests, entryPoints: findTests('test'), outdir: 'out/test', outbase: 'test' });
}
