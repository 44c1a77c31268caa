// The extension as users get it: `npm run package` writes the VSIX; `vsce ls` and the VSIX itself
// hold only what runs; VS Code's server installs it into an empty extensions folder
// (`--install-extension`), and in a workspace outside the repository, with no node_modules up its
// path, the main job runs from the Command Palette: training starts, the engine reports its
// backend, the attention view draws the probe's attention. Then the same installed extension with
// OpenBLAS hidden from dlopen (ATTENTION_DEBUGGER_BLAS_PATH at nothing): Show Engine Info names the
// fallback and the fix, and the walkthrough's Train button still trains. Screenshots go to
// test-artifacts/vscode/vsix-*.png.
//   node --test test/vscode/vsix/vsix.test.mjs     (npm test runs it after scripts/test-vscode.mjs)
/* global document */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { offences, required, webgpuDir, zipEntries } from './contents.mjs';
import * as wb from './workbench.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const TARGET = `${process.platform}-${process.arch}`;
const HIDDEN = '/nonexistent/libopenblas.so.0';
const shots = join(resolve(process.env.VSCODE_TEST_ARTIFACTS || join(repo, 'test-artifacts')), 'vscode');
const tmp = mkdtempSync(join(tmpdir(), 'attn-vsix-'));
const vsix = join(tmp, `attention-debugger-${TARGET}.vsix`);
const stage = join(tmp, 'stage');
const workspace = join(tmp, 'workspace');
const installed = { profile: null, dir: null };

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

before(() => {
  mkdirSync(shots, { recursive: true });
  mkdirSync(workspace);
  const t0 = Date.now();
  sh(process.execPath, [join(repo, 'scripts', 'package.mjs'), '--target', TARGET, '--out', vsix, '--stage', stage], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  console.log(`# npm run package took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});
after(() => rmSync(tmp, { recursive: true, force: true, maxRetries: 3 }));

test(`vsce ls lists only what runs on ${TARGET}, and the VSIX holds exactly those files`, () => {
  const vsce = join(repo, 'node_modules', '@vscode', 'vsce', 'vsce');
  const listed = sh(process.execPath, [vsce, 'ls'], { cwd: stage }).split('\n').filter(Boolean).sort();
  assert.deepEqual(offences(listed, TARGET), []);
  const missing = required(TARGET, { native: true }).filter((p) => !listed.includes(p));
  assert.deepEqual(missing, [], 'files the extension needs at run time');
  // Every bundle the development build writes is packed (a new entry point would be missed otherwise).
  assert.ok(existsSync(join(repo, 'dist', 'cli.js')), 'dist/ is missing: npm run build first');
  const built = readdirSync(join(repo, 'dist'), { recursive: true })
    .map((p) => p.split(sep).join('/'))
    .filter((p) => p.endsWith('.js') && p !== 'engine.js');
  assert.deepEqual(
    built.filter((p) => !listed.includes(`dist/${p}`)),
    [],
    'bundles of npm run build missing from the VSIX',
  );
  // vsce renames three files inside the VSIX; otherwise what it packed is what it listed.
  const renamed = { 'readme.md': 'README.md', 'changelog.md': 'CHANGELOG.md', 'LICENSE.txt': 'LICENSE' };
  const packed = zipEntries(readFileSync(vsix))
    .filter((p) => p.startsWith('extension/') && !p.endsWith('/'))
    .map((p) => p.slice('extension/'.length))
    .map((p) => renamed[p] ?? p)
    .sort();
  assert.deepEqual(packed, listed);

  const mb = statSync(vsix).size / 1e6;
  assert.ok(mb <= 30, `the VSIX is ${mb.toFixed(1)} MB, over the 30 MB it should stay under`);
  const stated = /VSIX for linux-x64 is (\d+(?:\.\d+)?) MB/.exec(readFileSync(join(repo, 'README.md'), 'utf8'));
  assert.ok(stated, 'README.md states the size of the linux-x64 VSIX ("The VSIX for linux-x64 is N MB")');
  if (TARGET === 'linux-x64')
    assert.ok(
      Math.abs(mb - Number(stated[1])) <= 0.1 * mb,
      `README.md says ${stated[1]} MB, the VSIX is ${mb.toFixed(1)} MB: update README.md`,
    );
});

test('the content rules catch sources, tests, benchmarks, C files, maps, other targets and unused packages', () => {
  const other = TARGET === 'win32-x64' ? 'linux-x64' : 'win32-x64';
  const planted = [
    'src/engine/index.ts',
    'test/helpers.ts',
    'bench/README.md',
    'native/blas.c',
    'test/fixtures/golden/x.json',
    'dist/cli.js.map',
    `node_modules/webgpu/dist/${webgpuDir(other)}/dawn.node`,
    'node_modules/@tensorflow/tfjs-core/package.json',
  ];
  const found = offences(planted, TARGET);
  for (const p of planted)
    assert.ok(
      found.some((f) => f.startsWith(`${p}:`)),
      `${p} is not caught`,
    );
  assert.deepEqual(offences(required(TARGET, { native: true }), TARGET), []);
});

test('the packed native kernels need no glibc newer than 2.28 (what VS Code server needs)', (t) => {
  if (process.platform !== 'linux') return t.skip('glibc symbol versions are a Linux matter');
  const objdump = spawnSync('objdump', ['--version']);
  if (objdump.status !== 0) return t.skip('no objdump here (binutils)');
  const symbols = sh('objdump', ['-T', join(stage, 'dist', 'native', 'blas.node')]);
  const newer = [...symbols.matchAll(/\(GLIBC_(\d+)\.(\d+)(?:\.\d+)?\)\s+(\S+)/g)]
    .filter(([, major, minor]) => Number(major) > 2 || (Number(major) === 2 && Number(minor) > 28))
    .map(([, major, minor, name]) => `${name}@GLIBC_${major}.${minor}`);
  assert.deepEqual(newer, [], 'pin them in native/glibc-compat.h');
});

/** Runs `fn` with a workbench; on failure keeps a screenshot and prints the extension's output. */
async function withWorkbench(name, profile, fn) {
  rmSync(join(shots, `${name}-failed.png`), { force: true });
  const w = await wb.openWorkbench({ profile, folder: workspace, logFile: join(shots, `${name}-server.log`) });
  try {
    await fn(w);
  } catch (err) {
    await w.page.screenshot({ path: join(shots, `${name}-failed.png`) }).catch(() => {});
    console.error(`--- Attention Debugger output ---\n${wb.outputChannel(profile.userData)}`);
    throw err;
  } finally {
    await w.stop();
  }
}

/** Train from the Command Palette with the wizard's answers for the main job; returns the run folder. */
async function trainFromPalette(page) {
  await wb.runCommand(page, 'Attention Debugger: Train');
  await wb.waitForQuestion(page, 'Train (1/4)');
  await wb.choose(page, 'reverse');
  await wb.waitForQuestion(page, 'Train (2/4)');
  await wb.choose(page, 'tiny');
  await wb.waitForQuestion(page, 'Train (3/4)');
  await wb.choose(page, "Use the config's settings");
  await wb.waitForQuestion(page, 'Train (4/4)');
  return wb.acceptInput(page);
}

const metricsSteps = (runDir) =>
  existsSync(join(runDir, 'metrics.jsonl'))
    ? readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean).length
    : 0;

test(
  'installed into an empty extensions folder, the main job runs from the Command Palette in a workspace outside the repository',
  { timeout: 420_000 },
  async () => {
    const profile = wb.server.prepareProfile(join(tmp, 'profile'));
    delete profile.env.ATTENTION_DEBUGGER_BLAS_PATH;
    assert.deepEqual(readdirSync(profile.extensionsDir), [], 'the extensions folder starts empty');
    const r = wb.installExtension(vsix, profile);
    assert.equal(r.status, 0, r.output);
    const entries = JSON.parse(readFileSync(join(profile.extensionsDir, 'extensions.json'), 'utf8'));
    const id = `${manifest.publisher}.${manifest.name}`;
    const entry = entries.find((e) => e.identifier.id === id);
    assert.ok(entry, `${id} in extensions.json`);
    assert.equal(entry.version, manifest.version);
    const dir = join(profile.extensionsDir, entry.relativeLocation);
    assert.ok(lstatSync(dir).isDirectory() && !lstatSync(dir).isSymbolicLink(), 'a copy, not a link to the repository');
    assert.ok(!existsSync(join(dir, 'src')) && existsSync(join(dir, 'dist', 'cli.js')));
    installed.profile = profile;
    installed.dir = dir;

    assert.ok(!workspace.startsWith(repo + sep), `${workspace} is outside ${repo}`);
    for (let d = workspace; d !== dirname(d); d = dirname(d))
      assert.ok(!existsSync(join(d, 'node_modules')), `no node_modules up the workspace's path (${d})`);

    await withWorkbench('vsix-installed', profile, async ({ page }) => {
      const runDir = await trainFromPalette(page);
      assert.equal(dirname(runDir), join(workspace, 'runs'), 'the run goes into the workspace');

      // Training starts: steps in the run folder's metrics.
      await wb.until(() => metricsSteps(runDir) >= 1, 'the first training step in metrics.jsonl', 180_000);
      // The engine reports its backend, and it runs from the installed copy.
      const log = await wb.until(
        () =>
          /tfjs backend: \w+; matMul: .+/.test(wb.outputChannel(profile.userData)) &&
          wb.outputChannel(profile.userData),
        'the engine to report its backend',
        60_000,
      );
      const [, backend, matmul] = /tfjs backend: (\w+); matMul: (.+)/.exec(log);
      assert.ok(['webgpu', 'tensorflow', 'wasm', 'cpu'].includes(backend), backend);
      if (backend === 'wasm') {
        const openblas = /libopenblas\.so\.0\b/.test(
          spawnSync('/sbin/ldconfig', ['-p'], { encoding: 'utf8' }).stdout ?? '',
        );
        assert.equal(/^OpenBLAS/.test(matmul), openblas, `matMul "${matmul}", OpenBLAS installed: ${openblas}`);
      }
      const pid = Number([...log.matchAll(/engine started: pid (\d+)/g)].pop()?.[1]); // the one running now
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.equal(cmdline[1], join(dir, 'dist', 'cli.js'), 'the engine is the installed one');

      // Attention arrives in the attention view: every layer and head of the three kinds, drawn, for
      // a snapshot the engine wrote.
      const config = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8'));
      const heads = config.heads * (config.encoder_layers + 2 * config.decoder_layers);
      const view = await wb.until(
        async () => {
          const v = await wb.attentionView(page);
          return v && v.step !== null && v.drawn === heads && v;
        },
        `the attention view to draw ${heads} heads`,
        240_000,
      );
      assert.equal(view.run, basename(runDir));
      assert.deepEqual(view.kinds, ['encoder_self', 'decoder_self', 'cross']);
      assert.ok(
        existsSync(join(runDir, 'snapshots', `step-${view.step}.safetensors`)),
        `snapshot of step ${view.step}`,
      );
      await page.screenshot({ path: join(shots, 'vsix-installed.png') });
    });
  },
);

test(
  'the installed extension with OpenBLAS hidden: Show Engine Info names the fallback and the fix; the walkthrough trains',
  { timeout: 420_000 },
  async () => {
    assert.ok(installed.profile, 'needs the extension installed by the test before');
    const profile = wb.server.prepareProfile(join(tmp, 'profile-no-openblas'));
    profile.extensionsDir = installed.profile.extensionsDir;
    profile.env.ATTENTION_DEBUGGER_BLAS_PATH = HIDDEN;

    await withWorkbench('vsix-no-openblas', profile, async ({ page }) => {
      await wb.runCommand(page, 'Attention Debugger: Show Engine Info');
      const info = await wb.notification(page, 'Attention Debugger engine');
      assert.match(info, /backend wasm/);
      assert.ok(info.includes(`OpenBLAS (${HIDDEN} with cblas_sgemm) not found`), info);
      assert.ok(info.includes('plain wasm'), info);
      assert.ok(info.includes('sudo apt-get install libopenblas0-pthread'), info);
      // A person expands the long message to read it: hover, then the toast's expand chevron.
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Attention Debugger engine' });
      await toast.hover();
      await toast.locator('.codicon-notifications-expand').click();
      await toast.locator('.notification-list-item.expanded').waitFor({ timeout: 10_000 });
      await page.screenshot({ path: join(shots, 'vsix-no-openblas.png') });

      // The walkthrough, as installed: its steps, and its first button trains.
      await wb.runCommand(page, 'Welcome: Open Walkthrough...');
      await wb.choose(page, 'Get Started with Attention Debugger');
      const steps = await wb.until(
        async () => {
          const s = await wb.walkthroughSteps(page);
          return s.length > 0 && s;
        },
        'the walkthrough page',
        60_000,
      );
      const wanted = manifest.contributes.walkthroughs[0].steps;
      assert.deepEqual(
        steps.map((s) => s.title),
        wanted.map((s) => s.title),
      );
      assert.equal(steps[0].done, false);
      // The first step's picture (media/walkthrough/anti-diagonal.svg), in the webview VS Code draws
      // it in: it comes seconds after the steps on a busy machine, so the screenshot waits for it.
      await wb.until(
        async () => {
          for (const f of page.frames()) {
            const text = await f.evaluate(() => document.querySelector('svg')?.textContent ?? '').catch(() => '');
            if (text.includes('cross-attention, trained')) return true;
          }
          return false;
        },
        "the first step's picture",
        60_000,
      );
      await page.screenshot({ path: join(shots, 'vsix-walkthrough.png') });
      await page.locator('.getting-started-step').first().getByText('Train the Reverse Task', { exact: true }).click();
      await wb.waitForQuestion(page, 'Train (4/4)');
      const runDir = await wb.acceptInput(page);
      await wb.until(() => metricsSteps(runDir) >= 2, 'two training steps without OpenBLAS', 240_000);
      // Training opened the panels over the walkthrough: back to its tab, where the step is done.
      await page.locator('.tabs-container .tab', { hasText: 'Walkthrough: Attention Debugger' }).click();
      await wb.until(async () => (await wb.walkthroughSteps(page))[0]?.done, 'the train step marked done', 60_000);
      await page.screenshot({ path: join(shots, 'vsix-walkthrough-done.png') });

      const log = wb.outputChannel(profile.userData);
      assert.match(log, /tfjs backend: wasm; matMul: XNNPACK on wasm/);
      assert.equal(log.split('sudo apt-get install libopenblas0-pthread').length - 1, 1, 'said once in the output');
      await page.screenshot({ path: join(shots, 'vsix-no-openblas-trained.png') });
    });
  },
);
