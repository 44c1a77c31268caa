/**
 * What run/open checks before a run is shown (run/openCheck.ts, issue 26 item 2), on folders built
 * on disk: whole checkpoints pass, a step between checkpoints (a snapshot's) is not a checkpoint to
 * check, and a truncated step file or a model.safetensors that is text is refused naming the file
 * and what to do.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type NamedTensor, writeSafetensors } from '../../src/engine/checkpoint/safetensors';
import { validateConfig } from '../../src/engine/model/config';
import { parameterSpecs } from '../../src/engine/model/params';
import { checkOpenedCheckpoint } from '../../src/engine/run/openCheck';
import { RunDir } from '../../src/engine/run/runDir';

const work = mkdtempSync(join(tmpdir(), 'open-check-'));
after(() => rmSync(work, { recursive: true, force: true }));

const RAW = {
  d_model: 8,
  heads: 2,
  d_ff: 16,
  encoder_layers: 1,
  decoder_layers: 1,
  src_vocab: 7,
  tgt_vocab: 7,
  dropout: 0.1,
  positional: 'sinusoidal',
  max_len: 16,
  norm_first: false,
  final_norm: false,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
};
const config = validateConfig(RAW, 'config.json');

/** A folder with config.json and, per step, a whole checkpoint of zeros of the config's shapes. */
function runWith(name: string, steps: number[]): RunDir {
  const dir = join(work, name);
  mkdirSync(join(dir, 'checkpoints'), { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(RAW));
  const tensors = new Map<string, NamedTensor>(
    parameterSpecs(config).map((s) => [
      s.name,
      { shape: s.shape, data: new Float32Array(s.shape.reduce((a, b) => a * b, 1)) },
    ]),
  );
  for (const step of steps)
    writeSafetensors(join(dir, 'checkpoints', `step-${step}.safetensors`), tensors, { step: String(step) });
  return new RunDir(dir);
}

test('whole checkpoints, a snapshot step and a run without checkpoints open', () => {
  const run = runWith('whole', [10, 20]);
  assert.doesNotThrow(() => checkOpenedCheckpoint(run, config, undefined));
  assert.doesNotThrow(() => checkOpenedCheckpoint(run, config, 10));
  assert.doesNotThrow(() => checkOpenedCheckpoint(run, config, 15), 'step 15 is a snapshot: its probe is read from it');
  assert.doesNotThrow(() => checkOpenedCheckpoint(runWith('fresh', []), config, undefined));
});

test('a truncated newest checkpoint is named, with the previous one to open at; its click offers the others', () => {
  const run = runWith('torn', [10, 20]);
  const file = join(run.path, 'checkpoints', 'step-20.safetensors');
  truncateSync(file, statSync(file).size - 4); // the last float of the last tensor gone
  assert.throws(
    () => checkOpenedCheckpoint(run, config, undefined),
    (err: Error) =>
      err.message.startsWith(`${run.path}: checkpoints/step-20.safetensors: `) &&
      /runs past the end of the data/.test(err.message) &&
      err.message.endsWith(
        'move checkpoints/step-20.safetensors out of the folder to open the run at its previous checkpoint, step 10',
      ),
  );
  assert.throws(() => checkOpenedCheckpoint(run, config, 20), /pick another checkpoint \(steps 10\)/);
  assert.doesNotThrow(() => checkOpenedCheckpoint(run, config, 10));
});

test('a model.safetensors that is text is named with what to do', () => {
  const dir = join(work, 'pytorch');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(RAW));
  writeFileSync(join(dir, 'model.safetensors'), 'not a checkpoint\n'); // 17 bytes
  // Its first 8 bytes read as a little-endian length: "not a ch" = 0x6863_2061_2074_6f6e, as a double.
  const n = Number(Buffer.from('not a ch').readBigUInt64LE(0));
  assert.throws(
    () => checkOpenedCheckpoint(new RunDir(dir), config, undefined),
    new Error(
      `${dir}: model.safetensors: header length ${n} runs past the end of the file (17 bytes): torn or not ` +
        'safetensors: its attention cannot be read; replace model.safetensors with the model your trainer saved ' +
        "(a state_dict written by safetensors' save_file)",
    ),
  );
});
