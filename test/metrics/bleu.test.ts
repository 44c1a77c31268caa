// Compares corpusBleu/formatBleu with numbers printed by sacreBLEU 2.6.0 itself; see
// test/metrics/bleu-cases/reference.json (its "command" field and make_reference.py say how they
// were produced). Nothing here is our own output recorded back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  corpusBleu,
  formatBleu,
  tokenize13a,
  pyFixed,
  bleuFromStats,
  type BleuOptions,
} from '../../src/engine/metrics/bleu';

// tsc emits this file to out/test/metrics/; the case files stay in the source tree.
const CASES = join(__dirname, '..', '..', '..', 'test', 'metrics', 'bleu-cases');

interface RefEntry {
  case: string;
  refs: string[];
  options: Record<string, unknown>;
  score: number;
  counts: number[];
  totals: number[];
  precisions: number[];
  bp: number;
  sys_len: number;
  ref_len: number;
  formatted: string;
  hyp_tokenized?: string[];
  cli?: string;
}
const reference = JSON.parse(readFileSync(join(CASES, 'reference.json'), 'utf8')) as {
  sacrebleu_version: string;
  cases: RefEntry[];
};

/** Lines as sacreBLEU's CLI reads a file: split on "\n" only; the final newline ends the last line. */
function readLines(name: string): string[] {
  const lines = readFileSync(join(CASES, name), 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function toOptions(o: Record<string, unknown>): BleuOptions {
  const opts: BleuOptions = {};
  if (o['lowercase'] !== undefined) opts.lowercase = o['lowercase'] as boolean;
  if (o['smooth_method'] !== undefined) opts.smoothMethod = o['smooth_method'] as BleuOptions['smoothMethod'];
  if (o['smooth_value'] !== undefined) opts.smoothValue = o['smooth_value'] as number;
  if (o['effective_order'] !== undefined) opts.effectiveOrder = o['effective_order'] as boolean;
  if (o['max_ngram_order'] !== undefined) opts.maxNgramOrder = o['max_ngram_order'] as number;
  return opts;
}

const close = (a: number, b: number, msg: string) =>
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${msg}: ${a} vs ${b}`);

test('reference numbers come from sacreBLEU 2.6.0', () => {
  assert.equal(reference.sacrebleu_version, '2.6.0');
  assert.ok(reference.cases.length >= 20);
});

for (const r of reference.cases) {
  test(`${r.case} ${JSON.stringify(r.options)} matches sacreBLEU`, () => {
    const hyps = readLines(`${r.case}.hyp`);
    const refs = r.refs.map(readLines);
    const s = corpusBleu(hyps, refs, toOptions(r.options));
    assert.equal(pyFixed(s.score, 2), pyFixed(r.score, 2), 'score to two decimals');
    close(s.score, r.score, 'score');
    assert.deepEqual(s.counts, r.counts);
    assert.deepEqual(s.totals, r.totals);
    assert.equal(s.precisions.length, r.precisions.length);
    s.precisions.forEach((p, i) => close(p, r.precisions[i]!, `precision ${i + 1}`));
    close(s.bp, r.bp, 'bp');
    assert.equal(s.sysLen, r.sys_len);
    assert.equal(s.refLen, r.ref_len);
    assert.equal(formatBleu(s), r.formatted);
    if (r.cli !== undefined) assert.equal(formatBleu(s), r.cli.replace(/^BLEU\|[^=]*=/, 'BLEU ='));
    if (r.hyp_tokenized !== undefined) assert.deepEqual(hyps.map(tokenize13a), r.hyp_tokenized);
  });
}

test('13a tokenization, worked by hand from the mteval-v13a rules', () => {
  // Period/comma split unless between digits; hyphen split only after a digit; symbols padded.
  assert.equal(tokenize13a('Hello, world.'), 'Hello , world .');
  assert.equal(tokenize13a('1,000.50 in 2019-2020'), '1,000.50 in 2019 - 2020');
  assert.equal(tokenize13a('state-of-the-art (x) "y"'), 'state-of-the-art ( x ) " y "');
  assert.equal(tokenize13a("don't &amp; &lt;b&gt;"), "don't & < b >");
  assert.equal(tokenize13a('a\u00a0b\ufeffc'), 'a b\ufeffc'); // NBSP splits, U+FEFF does not (Python isspace)
});

test('Python-style rounding: exact ties go to the even digit', () => {
  assert.equal(pyFixed(0.0625, 3), '0.062');
  assert.equal(pyFixed(6.25, 1), '6.2');
  assert.equal(pyFixed(6.75, 1), '6.8');
  assert.equal(pyFixed(0.1 + 0.2, 2), '0.30');
  assert.equal(pyFixed(2.675, 2), '2.67'); // 2.675 is stored just below the tie
});

test('sufficient statistics, hand-worked: BLEU = BP · (Π p_n)^(1/4)', () => {
  // 17 tokens; matches 12/17, 8/16, 5/15, 3/14 → 100·(12/17·8/16·5/15·3/14)^(1/4)
  //   = 100 · (0.705882 · 0.5 · 0.333333 · 0.214286)^(1/4) = 100 · 0.0252101^(1/4) = 39.847
  const s = bleuFromStats([12, 8, 5, 3], [17, 16, 15, 14], 17, 17);
  assert.equal(pyFixed(s.score, 2), '39.85');
  assert.equal(formatBleu(s), 'BLEU = 39.85 70.6/50.0/33.3/21.4 (BP = 1.000 ratio = 1.000 hyp_len = 17 ref_len = 17)');
});

test('mismatched stream lengths are an error', () => {
  assert.throws(() => corpusBleu(['a', 'b'], [['a']]), RangeError);
});
