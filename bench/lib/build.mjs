// Bundles bench/lib/engine.ts to out/bench/engine.js with scripts/build.mjs's settings (tfjs from
// its ESM entry, which registers the gradients; the same packages kept external) and loads it.
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const external = ['webgpu', '@tensorflow/tfjs-backend-wasm/package.json', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'vscode'];

/** Builds (a fraction of a second when nothing changed) and requires the engine bundle. */
export async function loadEngine() {
  const outfile = join(root, 'out', 'bench', 'engine.js');
  await esbuild.build({
    entryPoints: [join(root, 'bench', 'lib', 'engine.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    mainFields: ['module', 'main'],
    external,
    logLevel: 'warning',
  });
  return createRequire(import.meta.url)(outfile);
}
