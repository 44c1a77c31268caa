// README's pictures (media/readme/*.png) are screenshots the integration tests take of the real
// extension: this runs the tests that take them (in a real VS Code, scripts/test-vscode.mjs, or in
// Chromium, test/webview/browser/) and copies each screenshot over its picture. Run it after
// `npm run build` whenever a view the README shows changes; test/lint/pictures.test.ts checks that
// every picture README.md shows is there and listed in scripts/pictures.json.
//   node scripts/pictures.mjs [name…]     (no name: every picture)
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Each picture: the suite that takes its screenshot, and a test name that runs it. */
const PICTURES = JSON.parse(readFileSync(join(repo, 'scripts', 'pictures.json'), 'utf8'));

const SUITES = {
  vscode: { run: ['scripts/test-vscode.mjs'], grep: 'VSCODE_TEST_GREP', shots: 'test-artifacts/vscode' },
  webview: { run: ['test/webview/browser/index.mjs'], grep: 'WEBVIEW_TEST_GREP', shots: 'test-artifacts/webview' },
};

function take(name) {
  const picture = PICTURES[name];
  if (!picture) throw new Error(`pictures: no picture ${name}; known: ${Object.keys(PICTURES).join(', ')}`);
  const suite = SUITES[picture.suite];
  const shot = join(repo, suite.shots, `${name}.png`);
  rmSync(shot, { force: true });
  const env = { ...process.env, [suite.grep]: picture.test };
  const r = spawnSync(process.execPath, suite.run, { cwd: repo, env, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(shot)) throw new Error(`pictures: ${name}: the test failed or took no screenshot`);
  mkdirSync(join(repo, 'media', 'readme'), { recursive: true });
  copyFileSync(shot, join(repo, 'media', 'readme', `${name}.png`));
  console.log(`pictures: media/readme/${name}.png from "${picture.test}"`);
}

const names = process.argv.slice(2);
for (const name of names.length ? names : Object.keys(PICTURES)) take(name);
