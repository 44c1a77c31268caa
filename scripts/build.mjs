// Bundles the engine (library + CLI) with esbuild. tfjs stays external: its wasm binaries are
// located next to its package at run time, and tfjs-node is loaded lazily only where installed.
import * as esbuild from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  packages: 'external',
  logLevel: 'warning',
};

await esbuild.build({ ...common, entryPoints: { engine: 'src/engine/index.ts', cli: 'src/engine/cli/main.ts' }, outdir: 'dist' });
