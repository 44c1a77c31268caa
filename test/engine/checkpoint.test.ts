/** Checkpoints: round trip, and bad files that must give clear errors (never a crash, never a half file). */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint, saveCheckpoint } from '../../src/engine/checkpoint';
import { readSafetensors, writeSafetensors } from '../../src/engine/checkpoint/safetensors';
import { validateConfig } from '../../src/engine/model/config';
import { GOLDEN, readJson } from '../helpers';

const fixture = join(GOLDEN, 'post_ln_sinusoidal');
const scratch = (): string => mkdtempSync(join(tmpdir(), 'ad-ckpt-'));

before(async () => {
  await initBackend('wasm');
});

test('the safetensors layout is the documented one, byte for byte', () => {
  const dir = scratch();
  const path = join(dir, 'x.safetensors');
  writeSafetensors(path, new Map([['a', { shape: [2], data: new Float32Array([1, -2]) }]]));
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  assert.equal(n % 8, 0, 'header padded to 8 bytes');
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString());
  assert.deepEqual(header.a, { dtype: 'F32', shape: [2], data_offsets: [0, 8] });
  assert.equal(bytes.readFloatLE(8 + n), 1);
  assert.equal(bytes.readFloatLE(8 + n + 4), -2);
  assert.deepEqual(readdirSync(dir), ['x.safetensors'], 'no temp file left behind');
});

test('a checkpoint written by PyTorch loads, saves and loads again to the same values', async () => {
  const model = loadCheckpoint(fixture);
  const dir = scratch();
  await saveCheckpoint(model, join(dir, 'model.safetensors'), join(dir, 'config.json'));
  const a = readSafetensors(join(fixture, 'model.safetensors')).tensors;
  const b = readSafetensors(join(dir, 'model.safetensors')).tensors;
  assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort());
  for (const [name, t] of a) assert.deepEqual(b.get(name)!.data, t.data, name);
  assert.deepEqual(readJson(join(dir, 'config.json')), readJson(join(fixture, 'config.json')));
  model.dispose();
  loadCheckpoint(dir).dispose();
});

function brokenCopy(mutate: (bytes: Buffer, dir: string) => Buffer | void): string {
  const dir = scratch();
  copyFileSync(join(fixture, 'config.json'), join(dir, 'config.json'));
  const bytes = readFileSync(join(fixture, 'model.safetensors'));
  writeFileSync(join(dir, 'model.safetensors'), mutate(bytes, dir) ?? bytes);
  return dir;
}

test('a truncated file is an error that says so and names the tensor', () => {
  const dir = brokenCopy((b) => b.subarray(0, b.length - 100));
  assert.throws(
    () => loadCheckpoint(dir),
    /model\.safetensors: tensor "[^"]+": data \[\d+, \d+\) runs past the end of the data.*truncated/,
  );
  const tiny = brokenCopy((b) => b.subarray(0, 5));
  assert.throws(() => loadCheckpoint(tiny), /too short for a safetensors file/);
  const cut = brokenCopy((b) => b.subarray(0, 50));
  assert.throws(() => loadCheckpoint(cut), /header length \d+ runs past the end of the file/);
});

test('a file that does not match config.json names the tensor and both shapes', () => {
  const dir = brokenCopy((_, d) => {
    const config = readJson<Record<string, unknown>>(join(d, 'config.json'));
    writeFileSync(join(d, 'config.json'), JSON.stringify({ ...config, d_ff: 64 }));
  });
  assert.throws(
    () => loadCheckpoint(dir),
    /tensor "encoder\.layers\.0\.linear1\.weight" has shape \[32,16\], config expects \[64,16\]/,
  );
  const fewer = brokenCopy((_, d) => {
    const config = readJson<Record<string, unknown>>(join(d, 'config.json'));
    writeFileSync(join(d, 'config.json'), JSON.stringify({ ...config, encoder_layers: 3 }));
  });
  assert.throws(() => loadCheckpoint(fewer), /missing tensor "encoder\.layers\.2\.self_attn\.in_proj_weight"/);
});

test('a malformed config.json names the file and the field', () => {
  const dir = scratch();
  mkdirSync(join(dir, 'ck'));
  writeFileSync(join(dir, 'ck', 'config.json'), '{"d_model": 16,');
  copyFileSync(join(fixture, 'model.safetensors'), join(dir, 'ck', 'model.safetensors'));
  assert.throws(() => loadCheckpoint(join(dir, 'ck')), /config\.json(:\d+)?: not valid JSON/);
});

test('impossible configs are rejected with the field named', () => {
  const good = readJson<Record<string, unknown>>(join(fixture, 'config.json'));
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ d_model: 18, heads: 4 }, /d_model: 18 is not divisible by heads=4/],
    [{ encoder_layers: 0 }, /encoder_layers: must be at least 1 layer/],
    [{ dropout: 1.5 }, /dropout: expected a number in \[0, 1\)/],
    [{ positional: 'rotary' }, /positional: expected "sinusoidal" or "learned"/],
    [{ heads: undefined }, /heads: missing/],
    [{ share_embeddings: true, tgt_vocab: 40 }, /share_embeddings: needs src_vocab == tgt_vocab/],
    [{ pad_id: 99 }, /pad_id: 99 is outside the vocabulary/],
  ];
  for (const [change, message] of cases)
    assert.throws(
      () => validateConfig({ ...good, ...change }, 'my.json'),
      (err: Error) => err.message.startsWith('my.json: ') && message.test(err.message),
    );
});
