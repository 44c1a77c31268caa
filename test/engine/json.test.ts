/** JSON files read with errors that name the file and where it breaks, never quoting its contents. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readJsonFile } from '../../src/engine/io/json';

const dir = mkdtempSync(join(tmpdir(), 'json-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a file that is not JSON is named without its contents (a config pointed at /etc/passwd)', () => {
  const file = join(dir, 'passwd');
  writeFileSync(file, 'root:x:0:0:root:/root:/bin/bash\nsecret:x:1:1::/:/bin/sh\n');
  assert.throws(
    () => readJsonFile(file),
    (err: Error) => {
      assert.equal(err.message, `${file}: not valid JSON (not JSON from its first character)`);
      return true;
    },
  );
});

test('a broken JSON file is named with the line and column where it breaks', () => {
  const file = join(dir, 'config.json');
  writeFileSync(file, '{\n  "d_model": 16,\n  "heads" 2\n}\n');
  // Line 3 is `  "heads" 2`: the parser stops at column 11, where the 2 stands instead of a colon.
  assert.throws(
    () => readJsonFile(file),
    (err: Error) => err.message.startsWith(`${file}:3: not valid JSON at column 11 (`),
  );
  assert.throws(() => readJsonFile(join(dir, 'nothing.json')), { message: `${join(dir, 'nothing.json')}: not found` });
});
