// Bundles bench/lib/engine.ts to out/bench/engine.js with scripts/build.mjs's settings (tfjs from
// its ESM entry, which registers the gradients; the same packages kept external) and loads it.
// Where esbuild is not installed (the GPU machine, which gets the bundle from bench/gpu/pack.mjs),
// the bundle already there is loaded as it is.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { nodeBundle } from '../../scripts/esbuild-options.mjs';
import { stubFor } from './olderEntry.mjs';

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

/** The last commit before the engine had its webgpu kernels (issue 15): the GPU benches' "before". */
export const ENGINE_BEFORE = '198c3d2';

/**
 * Bundles the engine as it was at `commit` (a git worktree with this tree's bench entry and
 * node_modules; what that engine lacks stubbed) to out/bench/engine-<commit>.js, for
 * BENCH_ENGINE_BUNDLE; returns its path.
 */
export async function bundleEngineAt(commit) {
  const outfile = join(root, 'out', 'bench', `engine-${commit}.js`);
  const worktree = mkdtempSync(join(tmpdir(), 'engine-at-'));
  const git = (...args) => execFileSync('git', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  git('worktree', 'add', '--quiet', '--detach', worktree, commit);
  try {
    symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'));
    const entry = join(worktree, 'bench', 'lib', 'engine.ts');
    copyFileSync(join(root, 'bench', 'lib', 'engine.ts'), entry);
    const esbuild = await import('esbuild');
    // What the older engine lacks is stubbed as undefined (olderEntry.mjs), a round per report.
    for (let round = 0; ; round++) {
      try {
        await esbuild.build({ ...nodeBundle, entryPoints: [entry], outfile, logLevel: 'silent' });
        break;
      } catch (err) {
        const lines = readFileSync(entry, 'utf8').split('\n');
        const ours = (err.errors ?? []).filter((e) => e.location?.file.endsWith(join('bench', 'lib', 'engine.ts')));
        const stubbed = ours.filter((e) => stubFor(lines, e.text, e.location.line)).length;
        if (round >= 10 || stubbed === 0) throw err;
        writeFileSync(entry, lines.join('\n'));
      }
    }
  } finally {
    git('worktree', 'remove', '--force', worktree);
  }
  return outfile;
}
