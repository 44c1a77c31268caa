/**
 * Silent inputs of issue 27 item 7 where they reach `serve` and check-run: a checkpoint holding NaN
 * (check-run called the run valid; attention/get answered "engine bug") and typed words the run's
 * vocabulary reads as <unk> (shown as <unk> with no word). The CLI's rows: test/cli/silent-inputs.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO } from '../helpers';
import { micro, poison } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8', cwd: REPO });
const dir = scratch('ad-silent-');
const run = join(dir, 'run'); // the copy task, 6 steps of the micro model: checkpoints at 3 and 6
const nan = join(dir, 'nan'); // its copy, step 6's decoder.layers.0.linear1.weight[0] = NaN
const TENSOR = 'decoder.layers.0.linear1.weight';
const engine = new RawEngine();
after(() => engine.proc.kill());

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro());
  const r = cli('train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run);
  assert.equal(r.status, 0, r.stderr);
  cpSync(run, nan, { recursive: true });
  (poison(TENSOR) as (path: string) => void)(join(nan, 'checkpoints', 'step-6.safetensors'));
});

test('check-run finds the NaN, naming the checkpoint and the tensor', () => {
  assert.equal(cli('check-run', run).status, 0, 'the sound run is valid');
  const r = cli('check-run', nan);
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stdout, new RegExp(`step-6\\.safetensors: ${TENSOR}: holds NaN at index 0 of \\d+`));
  assert.match(r.stdout, /1 problem\b/);
});

test('attention/get of a NaN checkpoint says which tensor, not "engine bug"', async () => {
  const params = { runDir: nan, input: { kind: 'text', src: '4 5 6', tgt: '4 5 6' } };
  const reply = await engine.request('attention/get', params);
  assert.doesNotMatch(reply.error?.message ?? '', /engine bug/);
  assert.match(reply.error?.message ?? '', new RegExp(`step-6\\.safetensors: tensor "${TENSOR}" holds NaN`));
  const earlier = await engine.request('attention/get', { ...params, step: 3 });
  assert.equal(earlier.error, undefined, 'its earlier checkpoint is shown');
});

test('attention/get names the typed words read as <unk>', async () => {
  const reply = await engine.request('attention/get', {
    runDir: run,
    input: { kind: 'text', src: '4 five 6 five', tgt: '4 x' },
  });
  const attention = (reply.result as { attention: { source: { unknownWords?: string[] }; srcTokens: string[] } })
    .attention;
  assert.deepEqual(attention.source.unknownWords, ['five', 'x']);
  assert.deepEqual(attention.srcTokens, ['4', '<unk>', '6', '<unk>', '</s>']);
  const known = await engine.request('attention/get', { runDir: run, input: { kind: 'text', src: '4 5', tgt: '5' } });
  const source = (known.result as { attention: { source: Record<string, unknown> } }).attention.source;
  assert.equal('unknownWords' in source, false, 'no unknownWords when every word is known');
});
