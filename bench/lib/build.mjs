// Bundles bench/lib/engine.ts to out/bench/engine.js with scripts/build.mjs's settings (tfjs from
// its ESM entry, which registers the gradients; the same packages kept external) and loads it.
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { nodeBundle } from '../../scripts/esbuild-options.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Builds (a fraction of a second when nothing changed) and requires the engine bundle. */
export async function loadEngine() {
  const outfile = join(root, 'out', 'bench', 'engine.js');
  await esbuild.build({ ...nodeBundle, entryPoints: [join(root, 'bench', 'lib', 'engine.ts')], outfile });
  return createRequire(import.meta.url)(outfile);
}
