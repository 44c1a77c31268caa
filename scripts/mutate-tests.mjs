// The tests StrykerJS runs for each mutant (stryker.config.mjs, `npm run mutate`; test/README.md, "Mutation score").
//   node scripts/mutate-tests.mjs build   bundles the test files below into out/mutate/ (once per sandbox)
//   node scripts/mutate-tests.mjs run     runs them; with __STRYKER_ACTIVE_MUTANT__ set, only those of the
//                                         mutated file that holds that mutant, stopping at the first failure
// The command runner knows no coverage: it would run every test for every mutant. Here the mutant's file
// (found in the instrumented sources of the sandbox) picks the tests that exercise it. The tests run on
// the cpu and wasm backends (wasm with the native kernels when dist/native/blas.node is built): webgpu is
// made to find no adapter and its skip allowed, because on lavapipe it triples the time and adds no path.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { nodeBundle } from './esbuild-options.mjs';

/** Per mutated file: the test files (under test/, without .test.ts), fastest first. */
export const SUITES = {
  'src/engine/decode/beam.ts': ['decode/mutants-beam', 'decode/beam'],
  'src/engine/decode/greedy.ts': ['decode/mutants-greedy', 'decode/beam'],
  'src/engine/model/attention.ts': ['engine/mutants-attention', 'engine/attention', 'engine/golden'],
  'src/engine/train/loss.ts': ['train/mutants-loss', 'engine/fused-loss', 'engine/train-step'],
  'src/engine/train/step.ts': ['train/mutants-step', 'engine/train-step', 'engine/clipping', 'engine/gradients'],
  'src/engine/train/adam.ts': ['train/mutants-adam', 'engine/train-step', 'engine/gradients'],
};
export const MUTATED = Object.keys(SUITES);

/** A test file that runs longer than this is taken for a mutant's endless loop and fails the run. */
const LIMIT_S = 20;
const OUT = 'out/mutate';
const all = [...new Set(Object.values(SUITES).flat())];

/** The mutated file that holds mutant `id`: the instrumented file that switches on it. */
function fileOf(id) {
  const needle = `stryMutAct_9fa48("${id}")`;
  return MUTATED.find((file) => readFileSync(file, 'utf8').includes(needle));
}

// Imported by stryker.config.mjs for SUITES: act only when run as a script.
const mode = import.meta.url === pathToFileURL(process.argv[1] ?? '').href ? process.argv[2] : 'imported';
if (mode === 'imported') {
  // nothing to do
} else if (mode === 'build') {
  await esbuild.build({
    ...nodeBundle,
    sourcemap: false,
    entryPoints: all.map((t) => `test/${t}.test.ts`),
    outdir: OUT,
    outbase: 'test',
  });
} else if (mode === 'run') {
  const id = process.env.__STRYKER_ACTIVE_MUTANT__;
  const file = id === undefined ? undefined : fileOf(id);
  // Not found (another instrumenter's names?): every test, slower but never a mutant killed by the runner.
  if (id !== undefined && !file) console.error(`mutant ${id} is in none of ${MUTATED.join(', ')}: running all tests`);
  const tests = file ? SUITES[file] : all;
  const env = { ...process.env, VK_ICD_FILENAMES: '/nonexistent', ATTENTION_DEBUGGER_ALLOW_SKIP: 'webgpu' };
  for (const t of tests) {
    const js = `${OUT}/${t}.test.js`;
    if (!existsSync(js)) throw new Error(`${js} is not built (node scripts/mutate-tests.mjs build)`);
    // The file itself, not `node --test` (whose child would outlive a kill): node:test runs in this process.
    const r = spawnSync(process.execPath, ['--max-old-space-size=2048', '--test-reporter=dot', js], {
      stdio: 'inherit',
      env,
      timeout: LIMIT_S * 1000,
      killSignal: 'SIGKILL',
    });
    if (r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGKILL') {
      console.error(`${t}: still running after ${LIMIT_S} s (an endless loop): mutant ${id} killed`);
      process.exit(124);
    }
    if (r.status !== 0) {
      console.error(`${t}: failed${id === undefined ? '' : ` with mutant ${id} (${file})`}`);
      process.exit(1);
    }
  }
} else {
  console.error('usage: node scripts/mutate-tests.mjs build|run');
  process.exit(2);
}
