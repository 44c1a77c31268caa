/**
 * scripts/check-circles.mjs counts type imports: esbuild drops `import type`, so a circle closed by
 * types alone (src/extension/ctx.ts ↔ viewer.ts ↔ follower.ts, issue 29) passed unseen. Each case
 * plants two or three files in a folder of its own and runs the script on it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

function checkCircles(files: Record<string, string>): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'circles-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/check-circles.mjs'), dir], { encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a circle of two files that import each other only as types fails', () => {
  const r = checkCircles({
    'a.ts': "import type { B } from './b';\nexport interface A {\n  b: B;\n}\n",
    'b.ts': "import type { A } from './a';\nexport interface B {\n  a?: A;\n}\n",
  });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /a\.ts ↔ b\.ts/);
});

test('re-exports, import() types and ./x.js specifiers close a circle too', () => {
  const r = checkCircles({
    'lib/a.ts': "export type { B } from './b.js';\nexport interface A {\n  n: number;\n}\n",
    'lib/b.ts': "export type B = import('../c').C;\n",
    'c.ts': "export * from './lib/a';\nexport interface C {\n  m: number;\n}\n",
  });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /c\.ts ↔ lib\/a\.ts ↔ lib\/b\.ts/);
});

test('type imports one way only pass', () => {
  const r = checkCircles({
    'a.ts': "import type { B } from './b';\nexport type A = B[];\n",
    'b.ts': "import { x } from 'some-package';\nexport type B = typeof x;\n",
  });
  assert.equal(r.status, 0, r.stderr);
});
