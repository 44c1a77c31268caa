/**
 * The test hook stays out of the product: no product file (src/, webview/) says `reportDrawn` or
 * sends or takes a `drawn` message; only the harnesses' page hook (test/pageHook/pageHook.js)
 * answers what a page drew.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test("no product file asks a page what it drew or handles the answer: that is the test harness's page hook", () => {
  const found = [join(REPO, 'src'), join(REPO, 'webview')].flatMap(sources).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line, i) => ({ line, at: `${relative(REPO, file)}:${i + 1}` }))
      .filter(({ line }) => /reportDrawn|['"]drawn['"]/.test(line))
      .map(({ at, line }) => `${at}: ${line.trim()}`),
  );
  assert.deepEqual(found, []);
});
