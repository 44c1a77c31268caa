import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMo, cleanMessage, splitOf, buildGettextCorpus, catalogFiles } from '../../src/engine/data/gettext';
import { Bpe } from '../../src/engine/data/bpe';
import { cannotRun } from '../helpers';

const dir = mkdtempSync(join(tmpdir(), 'mo-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// A 4-entry catalog laid out by hand (offsets counted on paper; strings are NUL-terminated and the
// table lengths exclude the NUL):
//   0..27   header: magic, revision 0, N=4, msgid table at 28, msgstr table at 60, hash size 0, at 92
//   28..59  msgid table  (len, off): (0,92) (16,93) (10,110) (9,121)
//   60..91  msgstr table (len, off): (40,131) (19,172) (14,192) (7,207)
//   92  ""                          93  "%d file\0%d files"      110 "Open _File"   121 "menu\x04Quit"
//   131 "Content-Type: text/plain; charset=UTF-8\n"   172 "%d Datei\0%d Dateien"
//   192 "_Datei öffnen" (ö is 2 bytes)                207 "Beenden"                   215 = end
function handMo(littleEndian: boolean): Uint8Array {
  const bytes = new Uint8Array(215);
  const view = new DataView(bytes.buffer);
  const words = [0x950412de, 0, 4, 28, 60, 0, 92, 0, 92, 16, 93, 10, 110, 9, 121, 40, 131, 19, 172, 14, 192, 7, 207];
  words.forEach((w, i) => view.setUint32(4 * i, w, littleEndian));
  const put = (at: number, s: string): void => bytes.set(Buffer.from(s, 'utf8'), at);
  put(93, '%d file\0%d files');
  put(110, 'Open _File');
  put(121, 'menu\x04Quit');
  put(131, 'Content-Type: text/plain; charset=UTF-8\n');
  put(172, '%d Datei\0%d Dateien');
  put(192, '_Datei öffnen');
  put(207, 'Beenden');
  return bytes;
}

test('parses a hand-laid .mo file in both byte orders', () => {
  const le = handMo(true);
  assert.deepEqual([...le.subarray(0, 4)], [0xde, 0x12, 0x04, 0x95]); // little-endian magic on disk
  const be = handMo(false);
  assert.deepEqual([...be.subarray(0, 4)], [0x95, 0x04, 0x12, 0xde]);
  for (const bytes of [le, be]) {
    const cat = parseMo(bytes, 'hand.mo');
    assert.equal(cat.header.get('Content-Type'), 'text/plain; charset=UTF-8');
    assert.deepEqual(cat.entries, [
      { context: null, msgid: '%d file', msgidPlural: '%d files', msgstr: ['%d Datei', '%d Dateien'] },
      { context: null, msgid: 'Open _File', msgidPlural: null, msgstr: ['_Datei öffnen'] },
      { context: 'menu', msgid: 'Quit', msgidPlural: null, msgstr: ['Beenden'] },
    ]);
  }
});

test('a latin1 catalog is decoded by its declared charset', () => {
  const bytes = handMo(true);
  // Rewrite the 40-byte header with a latin1 charset and msgstr 2 in latin1 (ö = F6, one byte).
  const header = 'Content-Type: text/plain; charset=latin1';
  assert.equal(header.length, 40);
  bytes.set(Buffer.from(header, 'latin1'), 131);
  bytes.set([0x5f, 0x44, 0x61, 0x74, 0x65, 0x69, 0x20, 0xf6, 0x66, 0x66, 0x6e, 0x65, 0x6e, 0x00], 192); // "_Datei öffnen" in latin1: 13 bytes + NUL
  const view = new DataView(bytes.buffer);
  view.setUint32(60 + 16, 13, true); // msgstr 2 is one byte shorter in latin1
  assert.equal(parseMo(bytes, 'l1.mo').entries[1]?.msgstr[0], '_Datei öffnen');
});

test('malformed catalogs are errors naming the file', () => {
  assert.throws(() => parseMo(new Uint8Array(10), 'short.mo'), {
    message: 'short.mo: not a .mo file (10 bytes, header needs 28)',
  });
  const bad = handMo(true);
  bad[0] = 0;
  assert.throws(() => parseMo(bad, 'x.mo'), /^Error: x\.mo: not a \.mo file \(magic 0x950412/);
  const past = handMo(true);
  new DataView(past.buffer).setUint32(28 + 8 * 2 + 4, 300, true); // msgid 2 now at offset 300
  assert.throws(() => parseMo(past, 'p.mo'), {
    message: 'p.mo: entry 2: msgid at offset 300, length 10 runs past the end (215 bytes)',
  });
});

test('cleanMessage strips mnemonics and collapses whitespace', () => {
  assert.equal(cleanMessage('Open _File'), 'Open File');
  assert.equal(cleanMessage('Ö_ffnen'), 'Öffnen');
  assert.equal(cleanMessage('&Save as...'), 'Save as...');
  assert.equal(cleanMessage('Tom && Jerry & friends'), 'Tom & Jerry & friends');
  assert.equal(cleanMessage('ファイル(_F)'), 'ファイル');
  assert.equal(cleanMessage('Set LC_ALL or LC_MESSAGES'), 'Set LC_ALL or LC_MESSAGES');
  assert.equal(cleanMessage('Use &amp; for %s\n  twice'), 'Use &amp; for %s twice');
});

test('corpus: filters by word count and identity, dedupes, and the split depends only on the source', () => {
  // Build catalogs with the same hand layout, varying only the strings (lengths fixed by padding).
  const cat = (entries: [string, string][]): Uint8Array => {
    const ids = ['', ...entries.map((e) => e[0])].map((s) => Buffer.from(s));
    const strs = ['Content-Type: text/plain; charset=UTF-8\n', ...entries.map((e) => e[1])].map((s) => Buffer.from(s));
    const n = ids.length;
    let off = 28 + 16 * n;
    const head = Buffer.alloc(off);
    [0x950412de, 0, n, 28, 28 + 8 * n, 0, off].forEach((w, i) => head.writeUInt32LE(w, 4 * i));
    const body: Buffer[] = [];
    [...ids, ...strs].forEach((b, k) => {
      head.writeUInt32LE(b.length, 28 + 8 * k);
      head.writeUInt32LE(off, 28 + 8 * k + 4);
      body.push(b, Buffer.from([0]));
      off += b.length + 1;
    });
    return Buffer.concat([head, ...body]);
  };
  const a = join(dir, 'a.mo');
  const b = join(dir, 'b.mo');
  writeFileSync(
    a,
    cat([
      ['Save the file now', 'Datei jetzt speichern'],
      ['Quit', 'Beenden'], // 1 word: too short
      ['No such file or directory', 'No such file or directory'], // identical
      ['Could not open _the file', 'Konnte die Datei nicht _öffnen'],
    ]),
  );
  writeFileSync(
    b,
    cat([
      ['Save the file now', 'Datei jetzt speichern'], // duplicate of a.mo
      ['Save the file now', 'Die Datei jetzt sichern'], // another translation: kept
      [Array(31).fill('word').join(' '), 'zu lang zu lang'], // 31 words: too long
    ]),
  );
  const one = buildGettextCorpus({ lang: 'xx', files: [a] });
  const all = [...one.train, ...one.valid, ...one.test];
  assert.deepEqual(
    all.sort((p, q) => (p.src < q.src ? -1 : 1)),
    [
      { src: 'Could not open the file', tgt: 'Konnte die Datei nicht öffnen' },
      { src: 'Save the file now', tgt: 'Datei jetzt speichern' },
    ],
  );
  const two = buildGettextCorpus({ lang: 'xx', files: [a, b] });
  assert.deepEqual(two.stats, {
    catalogs: 2,
    failed: [],
    entries: 7,
    dropped: { untranslated: 0, length: 2, identical: 1, duplicate: 1 },
    pairs: 3,
  });
  for (const split of ['train', 'valid', 'test'] as const) {
    for (const p of one[split])
      assert.ok(
        two[split].some((q) => q.src === p.src && q.tgt === p.tgt),
        `${p.src} moved out of ${split}`,
      );
    for (const p of two[split]) assert.equal(splitOf(p.src), split);
  }
  // With everything held out for validation, every pair lands there.
  assert.equal(buildGettextCorpus({ lang: 'xx', files: [a], validFraction: 1, testFraction: 0 }).valid.length, 2);
  const broken = join(dir, 'broken.mo');
  writeFileSync(broken, 'not a catalog at all, just text');
  assert.match(
    buildGettextCorpus({ lang: 'xx', files: [broken, a] }).stats.failed[0] ?? '',
    /broken\.mo: not a \.mo file/,
  );
});

test('real catalogs of this machine: English -> German pairs', (t) => {
  const files = catalogFiles('de');
  if (files.length === 0) {
    // scripts/setup-system.sh installs libc-l10n (glibc's catalogs), past a slim image's dpkg path-exclude.
    cannotRun(t, 'gettext-de', 'no German gettext catalogs in /usr/share/locale/de/LC_MESSAGES');
    return;
  }
  const c = buildGettextCorpus({ lang: 'de' });
  const pairs = [...c.train, ...c.valid, ...c.test];
  t.diagnostic(
    `${files.length} catalogs -> ${pairs.length} pairs (train ${c.train.length}, valid ${c.valid.length}, test ${c.test.length})`,
  );
  assert.ok(pairs.length > 100, `only ${pairs.length} pairs`);
  const keys = new Set<string>();
  for (const p of pairs) {
    for (const s of [p.src, p.tgt]) {
      const n = s.split(' ').length;
      assert.ok(n >= 3 && n <= 30 && !/[\t\n]/.test(s), JSON.stringify(s));
    }
    assert.notEqual(p.src, p.tgt);
    keys.add(p.src + '\t' + p.tgt);
  }
  assert.equal(keys.size, pairs.length);
  // The brief's speed bar: 8k merges on a corpus of this size well under a minute on one core.
  const t0 = Date.now();
  const bpe = Bpe.learn(
    c.train.flatMap((p) => [p.src, p.tgt]),
    { numMerges: 8000, vocabSize: Infinity },
  );
  const ms = Date.now() - t0;
  t.diagnostic(`BPE: ${bpe.merges.length} merges in ${ms} ms`);
  assert.ok(ms < 30_000, `BPE learning took ${ms} ms`);
  const exact = c.valid.filter((p) => bpe.decode(bpe.encode(p.tgt)) === p.tgt).length;
  assert.ok(exact >= 0.99 * c.valid.length, `only ${exact}/${c.valid.length} targets round-trip`);
});
