// StrykerJS over the engine's numeric core (`npm run mutate`; score and survivors: test/README.md, "Mutation score").
// The command runner runs scripts/mutate-tests.mjs: the test bundles are built once per sandbox from the
// instrumented sources (mutant switching reads __STRYKER_ACTIVE_MUTANT__, which the bundle keeps), and each
// mutant runs only the tests of its own file.
import { MUTATED } from './scripts/mutate-tests.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: MUTATED,
  testRunner: 'command',
  commandRunner: { command: 'node scripts/mutate-tests.mjs run' },
  buildCommand: 'node scripts/mutate-tests.mjs build',
  coverageAnalysis: 'off',
  // Two cores here, shared: one mutant at a time.
  concurrency: 1,
  // A mutant's endless loop is cut by mutate-tests.mjs after 20 s per test file; this is the backstop.
  timeoutMS: 60000,
  timeoutFactor: 1,
  // The sandbox needs the sources, the tests and their fixtures, and the native addon (dist/native).
  ignorePatterns: ['/out', '/dist/*', '!/dist/native', '/.vscode-test', '/test-artifacts', '/runs', '/demo', '/bench'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: '.stryker-tmp',
};
