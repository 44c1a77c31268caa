// README's pictures (media/readme/*.png) are screenshots the integration tests take of the real
// extension: this runs the tests that take them (in a real VS Code, scripts/test-vscode.mjs, or in
// Chromium, test/webview/browser/) and copies each screenshot over its picture; a picture of suite
// `script` (the anti-diagonal animation) is drawn by its script instead. Pictures one test takes
// are made by one run of it. Run it after `npm run build` whenever a view the README shows changes.
//   node scripts/pictures.mjs [name…]     (no name: every picture)
// scripts/pictures.json lists each picture with what makes it and `shows`: the code it shows.
// test/lint/pictures.test.ts checks that every picture README.md shows is there and listed, and
// that none is older (in git's commit times) than the newest change to what it shows by more than
// `allowed_age_days` (30): a month lets a small fix to a panel land without a new screenshot,
// while a picture a month behind its panel is likely to show what the panel no longer draws.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Each picture: the suite that takes its screenshot and a test name that runs it, or its script. */
const { pictures: PICTURES } = JSON.parse(readFileSync(join(repo, 'scripts', 'pictures.json'), 'utf8'));

const SUITES = {
  vscode: { run: ['scripts/test-vscode.mjs'], grep: 'VSCODE_TEST_GREP', shots: 'test-artifacts/vscode' },
  webview: { run: ['test/webview/browser/index.mjs'], grep: 'WEBVIEW_TEST_GREP', shots: 'test-artifacts/webview' },
};

function picture(name) {
  const p = PICTURES[name];
  if (!p) throw new Error(`pictures: no picture ${name}; known: ${Object.keys(PICTURES).join(', ')}`);
  return p;
}

/** Runs one test (suite and name) and copies the screenshots of `names` it took over their pictures. */
function take(suiteName, test, names) {
  const suite = SUITES[suiteName];
  const shots = names.map((name) => join(repo, suite.shots, `${name}.png`));
  for (const shot of shots) rmSync(shot, { force: true });
  const env = { ...process.env, [suite.grep]: test };
  const r = spawnSync(process.execPath, suite.run, { cwd: repo, env, stdio: 'inherit' });
  mkdirSync(join(repo, 'media', 'readme'), { recursive: true });
  names.forEach((name, i) => {
    if (r.status !== 0 || !existsSync(shots[i]))
      throw new Error(`pictures: ${name}: the test failed or took no screenshot`);
    copyFileSync(shots[i], join(repo, 'media', 'readme', `${name}.png`));
    console.log(`pictures: media/readme/${name}.png from "${test}"`);
  });
}

/** Runs a picture's own script, which writes media/readme/<name>.png. */
function draw(name) {
  const r = spawnSync(process.execPath, [picture(name).run], { cwd: repo, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`pictures: ${name}: ${picture(name).run} failed`);
}

const names = process.argv.slice(2);
const byTest = new Map();
for (const name of names.length ? names : Object.keys(PICTURES)) {
  const p = picture(name);
  if (p.suite === 'script') {
    draw(name);
    continue;
  }
  const key = JSON.stringify([p.suite, p.test]);
  byTest.set(key, [...(byTest.get(key) ?? []), name]);
}
for (const [key, group] of byTest) take(...JSON.parse(key), group);
