// Bundles bench/lib/engine.ts to out/bench/engine.js with scripts/build.mjs's settings (tfjs from
// its ESM entry, which registers the gradients; the same packages kept external) and loads it.
// Where esbuild is not installed (the GPU machine, which gets the bundle from bench/gpu/pack.mjs),
// the bundle already there is loaded as it is.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { nodeBundle } from '../../scripts/esbuild-options.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const engineBundle = join(root, 'out', 'bench', 'engine.js');

/** Builds the engine bundle (a fraction of a second when nothing changed); false without esbuild. */
export async function bundleEngine() {
  const esbuild = await import('esbuild').catch(() => null);
  if (!esbuild) return false;
  const entryPoints = [join(root, 'bench', 'lib', 'engine.ts')];
  await esbuild.build({ ...nodeBundle, entryPoints, outfile: engineBundle });
  return true;
}

/**
 * Builds and requires the engine bundle; BENCH_ENGINE_BUNDLE names another, loaded as it is (the
 * GPU kit's bundle of an earlier commit, for a before/after in one run).
 */
export async function loadEngine() {
  const other = process.env.BENCH_ENGINE_BUNDLE;
  if (other) return createRequire(import.meta.url)(resolve(other));
  if (!(await bundleEngine()) && !existsSync(engineBundle))
    throw new Error(`esbuild is not installed and ${engineBundle} is missing: run npm install, or unpack the GPU kit`);
  return createRequire(import.meta.url)(engineBundle);
}
