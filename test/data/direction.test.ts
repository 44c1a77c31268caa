/**
 * Which way a corpus folder translates (issue 12 #2): --src-lang/--tgt-lang as given, the other one
 * from the remaining suffix, English first by default, and runs recorded without a direction read
 * alphabetically, as they were trained.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { corpusDirection } from '../../src/engine/data/dataset';
import { createRun, openRun } from '../../src/engine/run/setup';
import { microConfig, scratch } from '../train/helpers';

function corpus(...langs: string[]): string {
  const dir = join(scratch('ad-direction-'), 'data');
  mkdirSync(dir);
  for (const lang of langs) writeFileSync(join(dir, `train.${lang}`), 'a b\nc d\n'.repeat(10));
  return dir;
}

test('English is the source by default; otherwise the alphabetically first suffix', () => {
  assert.deepEqual(corpusDirection({ kind: 'files', dir: corpus('en', 'de') }), { srcLang: 'en', tgtLang: 'de' });
  assert.deepEqual(corpusDirection({ kind: 'files', dir: corpus('fr', 'en') }), { srcLang: 'en', tgtLang: 'fr' });
  assert.deepEqual(corpusDirection({ kind: 'files', dir: corpus('fr', 'de') }), { srcLang: 'de', tgtLang: 'fr' });
  assert.deepEqual(corpusDirection({ kind: 'files', dir: corpus('en', 'de') }, 'alphabetical'), {
    srcLang: 'de',
    tgtLang: 'en',
  });
});

test('one language named, the other is the remaining suffix; both named, they are taken as given', () => {
  const dir = corpus('en', 'de');
  assert.deepEqual(corpusDirection({ kind: 'files', dir, srcLang: 'de' }), { srcLang: 'de', tgtLang: 'en' });
  assert.deepEqual(corpusDirection({ kind: 'files', dir, tgtLang: 'en' }), { srcLang: 'de', tgtLang: 'en' });
  assert.deepEqual(corpusDirection({ kind: 'files', dir, srcLang: 'de', tgtLang: 'en' }), {
    srcLang: 'de',
    tgtLang: 'en',
  });
  const three = corpus('en', 'de', 'fr');
  assert.throws(() => corpusDirection({ kind: 'files', dir: three }), /train\.de, train\.en, train\.fr.*--src-lang/);
  assert.throws(() => corpusDirection({ kind: 'files', dir: three, srcLang: 'en' }), /--tgt-lang is needed/);
  assert.deepEqual(corpusDirection({ kind: 'files', dir: three, srcLang: 'en', tgtLang: 'fr' }), {
    srcLang: 'en',
    tgtLang: 'fr',
  });
  assert.throws(() => corpusDirection({ kind: 'files', dir: join(dir, 'nope') }), /--data .*nope: no such folder/);
});

test('a run records its direction; one recorded without it reopens in the alphabetical order it trained in', () => {
  const dir = scratch('ad-direction-');
  const data = corpus('en', 'de');
  const out = join(dir, 'run');
  const o = createRun({ out, data: { kind: 'files', dir: data }, config: microConfig(dir), overrides: {} });
  assert.deepEqual(o.dataSpec, { kind: 'files', dir: data, srcLang: 'en', tgtLang: 'de' });
  assert.match(o.data.summary, /en→de \(train\.en → train\.de\)/);
  const configPath = join(out, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  assert.deepEqual(config.data, o.dataSpec);
  writeFileSync(configPath, JSON.stringify({ ...config, data: { kind: 'files', dir: data } }));
  const reopened = openRun(out);
  assert.deepEqual(reopened.dataSpec, { kind: 'files', dir: data, srcLang: 'de', tgtLang: 'en' });
  assert.match(reopened.data.summary, /de→en/);
});
