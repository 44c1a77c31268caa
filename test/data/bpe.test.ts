import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bpe, END_OF_WORD } from '../../src/engine/data/bpe';
import { pretokenize, detokenize, stripJoiners } from '../../src/engine/data/tokenize';
import { PAD, BOS, EOS, UNK } from '../../src/engine/data/specialTokens';

const W = END_OF_WORD;
// Sennrich et al.'s toy dictionary: low x5, lower x2, newest x6, widest x3.
const CLASSIC = [
  ...Array<string>(5).fill('low'),
  ...Array<string>(2).fill('lower'),
  ...Array<string>(6).fill('newest'),
  ...Array<string>(3).fill('widest'),
];

test('special ids are the fixed engine-wide values', () => {
  assert.deepEqual([PAD, BOS, EOS, UNK], [0, 1, 2, 3]);
});

const J = '\uffed'; // joiner: marks a split that was not at whitespace

test('pretokenize splits punctuation from words, keeps inner apostrophes and hyphens, marks joins', () => {
  assert.deepEqual(pretokenize("Hello, world! Don't stop (well-known)."), [
    'Hello',
    `${J},`,
    'world',
    `${J}!`,
    "Don't",
    'stop',
    `(${J}`,
    'well-known',
    `${J})`,
    `${J}.`,
  ]);
  assert.deepEqual(pretokenize('  Größe:  3.14 %s\t„Ja“ '), [
    'Größe',
    `${J}:`,
    '3.14',
    `%${J}`,
    's',
    `„${J}`,
    'Ja',
    `${J}“`,
  ]);
  assert.deepEqual(pretokenize('»%s«'), ['»', `${J}%${J}`, 's', `${J}«`]);
  assert.deepEqual(pretokenize(''), []);
});

test('detokenize undoes pretokenize exactly (whitespace runs become one space)', () => {
  assert.equal(detokenize(['Hello', `${J},`, 'world', `${J}!`]), 'Hello, world!');
  for (const s of ['Er sagte „Ja“.', 'He said "no" (twice).', '»%s« - 100% (%d/%d)', "l'été n'est pas là !", 'a -- b'])
    assert.equal(detokenize(pretokenize(s)), s);
  assert.equal(detokenize(pretokenize(' a\t b ,c ')), 'a b ,c');
  assert.deepEqual(stripJoiners(pretokenize('(x)')), ['(', 'x', ')']);
});

test('learns the hand-worked merge sequence on low/lower/newest/widest', () => {
  // Worked by hand: pair counts with "</w>" glued to the last character; highest count wins, ties go
  // to the smaller left symbol, then the smaller right symbol.
  // Start: (e,s)=9 (s,t</w>)=9 (w,e)=8 (l,o)=7 (o,w</w>)=5 (n,e)=6 (e,w)=6 ...
  //  1 e+s (9, beats s+t</w> on "e"<"s")   2 es+t</w> (9)   3 l+o (7)
  //  4 e+w (6; ties n+e, w+est</w>)        5 ew+est</w> (6; "ew"<"n")   6 n+ewest</w> (6)
  //  7 lo+w</w> (5)   8 d+est</w> (3)   9 i+dest</w> (3)   10 w+idest</w> (3)
  // 11 e+r</w> (2; "e"<"lo"<"w")   12 lo+w (2)   13 low+er</w> (2); then only count-1 pairs remain.
  const bpe = Bpe.learn(CLASSIC, { vocabSize: 1000 });
  assert.deepEqual(bpe.merges, [
    ['e', 's'],
    ['es', `t${W}`],
    ['l', 'o'],
    ['e', 'w'],
    ['ew', `est${W}`],
    ['n', `ewest${W}`],
    ['lo', `w${W}`],
    ['d', `est${W}`],
    ['i', `dest${W}`],
    ['w', `idest${W}`],
    ['e', `r${W}`],
    ['lo', 'w'],
    ['low', `er${W}`],
  ]);
  // 4 specials + 11 characters (sorted) + 13 merged symbols.
  assert.deepEqual(bpe.vocab.slice(0, 15), [
    '<pad>',
    '<s>',
    '</s>',
    '<unk>',
    'd',
    'e',
    'i',
    'l',
    'n',
    'o',
    `r${W}`,
    's',
    `t${W}`,
    'w',
    `w${W}`,
  ]);
  assert.equal(bpe.size, 28);
  // "lowest" was never seen: e+s, es+t</w>, l+o, lo+w apply in rank order.
  assert.deepEqual(bpe.segmentWord('lowest'), ['low', `est${W}`]);
  assert.deepEqual(bpe.encode('lowest'), [bpe.tokenToId('low'), bpe.tokenToId(`est${W}`)]);
  assert.equal(bpe.tokenToId('low'), 26);
});

test('vocabSize and numMerges cap learning', () => {
  assert.equal(Bpe.learn(CLASSIC, { vocabSize: 17 }).merges.length, 2); // 15 + 2 merges
  assert.deepEqual(Bpe.learn(CLASSIC, { numMerges: 1, vocabSize: 1000 }).merges, [['e', 's']]);
});

test('unknown characters map to UNK and decode as <unk>', () => {
  const bpe = Bpe.learn(CLASSIC, { vocabSize: 1000 });
  assert.deepEqual(bpe.encode('xyz'), [UNK, UNK, UNK]);
  assert.deepEqual(bpe.encode('lox'), [bpe.tokenToId('lo'), UNK]); // x</w> unseen
  assert.equal(bpe.decode([bpe.tokenToId('lo'), UNK]), 'lo<unk>');
});

test('encode/decode round-trips ordinary sentences and drops PAD/BOS/EOS', () => {
  const corpus = [
    'The cat sat on the mat.',
    'Die Katze saß auf der Matte.',
    "Don't panic, it's fine!",
    'Was ist „das“?',
  ];
  const bpe = Bpe.learn(corpus, { vocabSize: 60 });
  for (const s of corpus) assert.equal(bpe.decode(bpe.encode(s)), s);
  const ids = bpe.encode('the mat');
  assert.equal(bpe.decode([BOS, ...ids, EOS, PAD, PAD]), 'the mat');
  assert.equal(bpe.decode(bpe.encode('The cat, sat'), { detokenize: false }), 'The cat , sat');
});

test('save writes JSON atomically and load restores the same model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bpe-'));
  try {
    const bpe = Bpe.learn(CLASSIC, { vocabSize: 1000 });
    const path = join(dir, 'bpe.json');
    bpe.save(path);
    assert.deepEqual(readdirSync(dir), ['bpe.json']); // no temp file left behind
    const back = Bpe.load(path);
    assert.deepEqual(back.vocab, bpe.vocab);
    assert.deepEqual(back.merges, bpe.merges);
    assert.deepEqual(back.encode('lowest newer'), bpe.encode('lowest newer'));
    writeFileSync(join(dir, 'bad.json'), '{"format":"other"}');
    assert.throws(() => Bpe.load(join(dir, 'bad.json')), /bad\.json: not a BPE model: format/);
    assert.throws(() => Bpe.load(join(dir, 'missing.json')), /missing\.json: not found/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Reference: the textbook algorithm with a full recount per merge (same tie rule), to check the
// incremental bookkeeping on a corpus too large to work by hand.
function naiveMerges(words: string[], numMerges: number): [string, string][] {
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  let segs = [...counts].map(([w, c]) => ({ syms: [...w.slice(0, -1)].concat(w.slice(-1) + W), c }));
  const merges: [string, string][] = [];
  for (let m = 0; m < numMerges; m++) {
    const pairs = new Map<string, { a: string; b: string; n: number }>();
    for (const { syms, c } of segs)
      for (let i = 0; i + 1 < syms.length; i++) {
        const k = syms[i] + '\u0000' + syms[i + 1];
        const p = pairs.get(k) ?? { a: syms[i] as string, b: syms[i + 1] as string, n: 0 };
        p.n += c;
        pairs.set(k, p);
      }
    const best = [...pairs.values()].sort(
      (x, y) => y.n - x.n || (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0),
    )[0];
    if (!best || best.n < 2) break;
    merges.push([best.a, best.b]);
    segs = segs.map(({ syms, c }) => {
      const out: string[] = [];
      for (let i = 0; i < syms.length; i++) {
        if (syms[i] === best.a && syms[i + 1] === best.b && i + 1 < syms.length) {
          out.push(best.a + best.b);
          i++;
        } else out.push(syms[i] as string);
      }
      return { syms: out, c };
    });
  }
  return merges;
}

test('incremental learning matches a full recount per merge', () => {
  let x = 12345;
  const rand = (): number => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words = Array.from({ length: 600 }, () =>
    Array.from({ length: 1 + Math.floor(rand() * 7) }, () => 'abcaab'[Math.floor(rand() * 6)]).join(''),
  );
  const expected = naiveMerges(words, 80);
  assert.ok(expected.length > 40);
  assert.deepEqual(Bpe.learn([words.join(' ')], { numMerges: 80, vocabSize: 10000 }).merges, expected);
});
