/**
 * A run folder written by PyTorch, for the rows and tests of commands on such runs (issue 27 item
 * 6): python/examples/train_reverse.py, one process, 2 steps of 4 pairs (a checkpoint with its
 * optimizer file and a snapshot at step 2), written once per test process and copied where needed.
 * Its model: d_model 32, 4 heads, 2 + 2 layers, vocabulary 11 (the reverse task).
 *
 * Where ATTENTION_DEBUGGER_SKIP_PYTHON=1 says PyTorch cannot run, the folder is config.json,
 * vocab.json and status.json as the RunWriter writes them, without checkpoints: enough for the
 * commands that refuse a PyTorch run from its config.json, which is all the rows ask.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../helpers';
import { PYTHON, pytorchAvailable } from '../run/pytorch';
import type { Plant } from './malformed-plants';

/** config.json as the RunWriter writes it for train_reverse.py --steps 2 --checkpoint-every 2 --batch 4. */
const WRITER_CONFIG = {
  d_model: 32,
  heads: 4,
  d_ff: 64,
  encoder_layers: 2,
  decoder_layers: 2,
  src_vocab: 11,
  tgt_vocab: 11,
  dropout: 0.1,
  norm_first: false,
  final_norm: true,
  positional: 'sinusoidal',
  max_len: 32,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
  run_format: 'attention-debugger-run',
  run_format_version: 2,
  writer: 'pytorch',
  training: {
    steps: 2,
    warmup: 100,
    lr_factor: 1.0,
    batch_pairs: 4,
    label_smoothing: 0.1,
    seed: 1,
    checkpoint_every: 2,
    snapshot_every: 2,
  },
  data: { kind: 'task', task: 'reverse', vocabSize: 11, minLength: 1, maxLength: 10 },
};

let written: string | undefined;

/** The folder (written on first use; removed when the process exits). */
export function pytorchRunFolder(): string {
  if (written) return written;
  const dir = mkdtempSync(join(tmpdir(), 'ad-pytorch-run-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const run = join(dir, 'run');
  if (process.env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1') {
    mkdirSync(run);
    writeFileSync(join(run, 'config.json'), `${JSON.stringify(WRITER_CONFIG, null, 2)}\n`);
    writeFileSync(join(run, 'vocab.json'), '{"kind":"task","size":11}\n');
    writeFileSync(join(run, 'status.json'), '{"state":"completed","step":2,"writer":"pytorch"}\n');
  } else {
    const why = pytorchAvailable();
    if (why) throw new Error(`${why} (ATTENTION_DEBUGGER_SKIP_PYTHON=1 plants its config.json alone)`);
    const r = spawnSync(
      PYTHON,
      ['python/examples/train_reverse.py', '--out', run, '--steps', '2', '--checkpoint-every', '2', '--batch', '4'],
      {
        cwd: REPO,
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: join(REPO, 'python'), OMP_NUM_THREADS: '1' },
        timeout: 120_000,
      },
    );
    if (r.status !== 0) throw new Error(`train_reverse.py failed:\n${r.stdout}\n${r.stderr}`);
  }
  written = run;
  return run;
}

/** Plants a copy of the PyTorch run at the path. */
export const pytorchRun: Plant = (path) => cpSync(pytorchRunFolder(), path, { recursive: true });
