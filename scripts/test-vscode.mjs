// Integration tests in a real VS Code (test/vscode/README.md). Needs `npm run build` first (the
// extension and the engine are loaded from dist/).
//   VSCODE_TEST_TARGET=server  (default where it installs) VS Code's server from code-server,
//                              driven by test/vscode/launcher in headless Debian Chromium
//   VSCODE_TEST_TARGET=desktop  desktop VS Code downloaded by @vscode/test-electron (needs network
//                              and a display, e.g. xvfb-run)
//   VSCODE_TEST_TARGET=auto    (default) server if scripts/setup-vscode.sh succeeds, else desktop
// VSCODE_TEST_GREP=<text> runs only the tests whose name contains it; 'a|b' those containing a or b.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { runTests } from '@vscode/test-electron';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(repo);
const target = process.env.VSCODE_TEST_TARGET || 'auto';
if (!['auto', 'server', 'desktop'].includes(target)) {
  console.error(`test-vscode: VSCODE_TEST_TARGET must be auto, server or desktop, not ${target}`);
  process.exit(2);
}

for (const f of ['dist/extension.js', 'dist/cli.js']) {
  if (!existsSync(f)) {
    console.error(`test-vscode: ${f} is missing: run npm run build first`);
    process.exit(2);
  }
}

let useServer = target === 'server';
if (target !== 'desktop') {
  const setup = spawnSync('bash', ['scripts/setup-vscode.sh'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (setup.status === 0) useServer = true;
  else if (target === 'server') process.exit(1);
  else console.error('test-vscode: setup-vscode.sh failed; falling back to desktop VS Code (download)');
}

// The test index and its tests, bundled into one file that the extension host requires.
const testsIndex = join(repo, 'out', 'vscode', 'index.js');
await esbuild.build({
  entryPoints: ['test/vscode/suite/index.ts'],
  outfile: testsIndex,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  external: ['vscode'],
  logLevel: 'warning',
});

// The page hook (test/pageHook/pageHook.js): every page the tests open loads it from dist/webview
// (activateExtension asks the panels to), and it answers what the page drew. Not in the product:
// removed again when the tests end, so dist/ holds only what the build writes (the VSIX test checks).
const pageHook = join(repo, 'dist', 'webview', 'pageHook.js');
copyFileSync(join(repo, 'test', 'pageHook', 'pageHook.js'), pageHook);

const t0 = Date.now();
try {
  await runTests({
    ...(useServer ? { vscodeExecutablePath: join(repo, 'test', 'vscode', 'launcher') } : {}),
    extensionDevelopmentPath: repo,
    extensionTestsPath: testsIndex,
    launchArgs: [join(repo, 'test', 'vscode', 'workspace'), '--disable-extensions'],
  });
  console.log(
    `test-vscode: passed in ${((Date.now() - t0) / 1000).toFixed(1)} s (${useServer ? 'VS Code server + Chromium' : 'desktop VS Code'})`,
  );
} catch (err) {
  console.error(`test-vscode: failed after ${((Date.now() - t0) / 1000).toFixed(1)} s: ${err.message ?? err}`);
  rmSync(pageHook, { force: true });
  process.exit(1);
}
rmSync(pageHook, { force: true });
