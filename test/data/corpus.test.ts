import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeLines, readPairs, loadCorpus, holdOut } from '../../src/engine/data/corpus';

const dir = mkdtempSync(join(tmpdir(), 'corpus-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array): string => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

test('two aligned files: CRLF stripped, BOM dropped, final newline adds no line', () => {
  const src = file('a.en', '\uFEFFHello world .\r\nGood morning\r\n');
  const tgt = file('a.de', 'Hallo Welt .\nGuten Morgen\n');
  const { pairs, stats } = readPairs({ src, tgt });
  assert.deepEqual(pairs, [
    { src: 'Hello world .', tgt: 'Hallo Welt .' },
    { src: 'Good morning', tgt: 'Guten Morgen' },
  ]);
  assert.deepEqual(stats, { lines: 2, kept: 2, tooLong: 0, empty: 0 });
});

test('unequal line counts name both files, both counts and the first unmatched line', () => {
  const src = file('u.en', 'a\nb\nc\n');
  const tgt = file('u.de', 'x\ny\n');
  assert.throws(
    () => readPairs({ src, tgt }),
    (e: Error) => {
      assert.equal(e.message, `${src}:3: unequal line counts: ${src} has 3 lines, ${tgt} has 2`);
      return true;
    },
  );
});

test('invalid UTF-8 names the file and the line', () => {
  // Line 3 holds a lone continuation byte 0x80; line 2 is valid two-byte UTF-8 (ä = C3 A4).
  const bytes = Uint8Array.from([0x61, 0x0a, 0x62, 0xc3, 0xa4, 0x0a, 0x63, 0x80, 0x0a, 0x64, 0x0a]);
  assert.throws(() => decodeLines(bytes, 'train.de'), { message: 'train.de:3: invalid UTF-8' });
  // A two-byte sequence cut short by the newline (C3 0A) is invalid on its own line.
  assert.throws(() => decodeLines(Uint8Array.from([0x61, 0x0a, 0xc3, 0x0a, 0x62]), 'x.en'), {
    message: 'x.en:2: invalid UTF-8',
  });
  assert.deepEqual(decodeLines(bytes.subarray(0, 6), 'ok'), ['a', 'bä']);
});

test('empty corpus is an error naming the file', () => {
  const src = file('e.en', '');
  const tgt = file('e.de', '');
  assert.throws(() => readPairs({ src, tgt }), { message: `${src}: empty corpus (no lines; ${tgt} too)` });
  const tsv = file('e.tsv', '\t\n \tx\n');
  assert.throws(() => readPairs({ tsv }), /e\.tsv: empty corpus: no pairs left of 2 \(2 with an empty side/);
});

test('TSV: source<TAB>target; a line without exactly one TAB is an error with its line', () => {
  const ok = file('t.tsv', 'one two\teins zwei\r\nthree\tdrei\n');
  assert.deepEqual(readPairs({ tsv: ok }).pairs, [
    { src: 'one two', tgt: 'eins zwei' },
    { src: 'three', tgt: 'drei' },
  ]);
  const bad = file('bad.tsv', 'a\tb\nno tab here\n');
  assert.throws(() => readPairs({ tsv: bad }), { message: `${bad}:2: expected source<TAB>target, found no TAB` });
  const two = file('two.tsv', 'a\tb\tc\n');
  assert.throws(() => readPairs({ tsv: two }), { message: `${two}:1: expected source<TAB>target, found 2 TABs` });
});

test('pairs longer than maxLength tokens, or with an empty side, are skipped and counted', () => {
  // Token counts by hand: "a b c d" = 4, "Hi, you!" = 4 (Hi , you !), "x y" = 2.
  const tsv = file('len.tsv', 'a b c d\tx y\nHi, you!\tx y\nx y\tx y z w v\n\tx\nx y\tx y\n');
  const { pairs, stats } = readPairs({ tsv }, { maxLength: 3 });
  assert.deepEqual(pairs, [{ src: 'x y', tgt: 'x y' }]);
  assert.deepEqual(stats, { lines: 5, kept: 1, tooLong: 3, empty: 1 });
  const byChars = readPairs({ tsv }, { maxLength: 4, countTokens: (s) => s.length });
  assert.deepEqual(byChars.stats, { lines: 5, kept: 1, tooLong: 3, empty: 1 });
});

test('held-out validation is deterministic in the seed and partitions the pairs', () => {
  const items = Array.from({ length: 200 }, (_, i) => i);
  const a = holdOut(items, 0.1, 7);
  const b = holdOut(items, 0.1, 7);
  const c = holdOut(items, 0.1, 8);
  assert.equal(a.heldOut.length, 20);
  assert.equal(a.kept.length, 180);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.heldOut, c.heldOut);
  assert.deepEqual(
    [...a.kept, ...a.heldOut].sort((x, y) => x - y),
    items,
  );
  assert.throws(() => holdOut(items, 1, 1), RangeError);
});

test('loadCorpus: separate validation pair, or a held-out fraction', () => {
  const lines = Array.from({ length: 40 }, (_, i) => `s${i} x`).join('\n');
  const src = file('l.en', lines);
  const tgt = file('l.de', lines.replace(/s/g, 't'));
  const vs = file('v.en', 'v x\n');
  const vt = file('v.de', 'w x\n');
  const sep = loadCorpus({ train: { src, tgt }, valid: { src: vs, tgt: vt } });
  assert.equal(sep.train.length, 40);
  assert.deepEqual(sep.valid, [{ src: 'v x', tgt: 'w x' }]);
  const held = loadCorpus({ train: { src, tgt }, validFraction: 0.25, seed: 3 });
  assert.equal(held.train.length, 30);
  assert.equal(held.valid.length, 10);
  assert.equal(held.stats.valid, null);
  for (const p of held.valid) assert.equal(p.tgt, p.src.replace('s', 't'));
});
