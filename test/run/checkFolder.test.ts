/**
 * checkRunFolder against a run folder assembled by hand from docs/RUN_FOLDER.md (no trainer involved):
 * the folder passes, what the format allows is not reported, and each defect planted in a copy is
 * reported once, naming its file, line and field. Needs no PyTorch.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeSafetensors, type NamedTensor } from '../../src/engine/checkpoint/safetensors';
import { checkRunFolder, type RunProblem } from '../../src/engine/run/checkFolder';
import { REPO } from '../helpers';

const work = mkdtempSync(join(tmpdir(), 'check-folder-'));
after(() => rmSync(work, { recursive: true, force: true }));

const D = 8;
const CONFIG = {
  d_model: D,
  heads: 2,
  d_ff: 16,
  encoder_layers: 1,
  decoder_layers: 1,
  src_vocab: 7,
  tgt_vocab: 7,
  dropout: 0.1,
  norm_first: false,
  final_norm: false,
  positional: 'sinusoidal',
  max_len: 16,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
  run_format: 'attention-debugger-run',
  run_format_version: 2,
  writer: 'pytorch',
  training: { steps: 2 },
  data: { kind: 'task', task: 'reverse' },
};

/** The checkpoint tensors of this config, written out from docs/RUN_FOLDER.md ("checkpoints/"). */
function checkpointTensors(): Map<string, NamedTensor> {
  const t = (...shape: number[]): NamedTensor => ({ shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) });
  const m = new Map<string, NamedTensor>();
  const attn = (p: string) => {
    m.set(`${p}.in_proj_weight`, t(3 * D, D)).set(`${p}.in_proj_bias`, t(3 * D));
    m.set(`${p}.out_proj.weight`, t(D, D)).set(`${p}.out_proj.bias`, t(D));
  };
  const ffn = (p: string) => {
    m.set(`${p}.linear1.weight`, t(16, D)).set(`${p}.linear1.bias`, t(16));
    m.set(`${p}.linear2.weight`, t(D, 16)).set(`${p}.linear2.bias`, t(D));
  };
  const norms = (p: string, n: number) => {
    for (let i = 1; i <= n; i++) m.set(`${p}.norm${i}.weight`, t(D)).set(`${p}.norm${i}.bias`, t(D));
  };
  attn('encoder.layers.0.self_attn');
  ffn('encoder.layers.0');
  norms('encoder.layers.0', 2);
  attn('decoder.layers.0.self_attn');
  attn('decoder.layers.0.multihead_attn');
  ffn('decoder.layers.0');
  norms('decoder.layers.0', 3);
  m.set('src_embed.weight', t(7, D)).set('tgt_embed.weight', t(7, D));
  m.set('generator.weight', t(7, D)).set('generator.bias', t(7));
  return m;
}

/** [1 layer, 2 heads, q, k] maps whose rows are uniform over the keys a query may see. */
function uniform(q: number, k: number, causal: boolean): NamedTensor {
  const data = new Float32Array(2 * q * k);
  for (let h = 0; h < 2; h++)
    for (let i = 0; i < q; i++) {
      const seen = causal ? i + 1 : k;
      for (let j = 0; j < seen; j++) data[(h * q + i) * k + j] = 1 / seen;
    }
  return { shape: [1, 2, q, k], data };
}

const PAIRS = [{ src: ['4', '5', '</s>'], tgt: ['<s>', '5', '4', '</s>'] }];
function snapshot(overrides: Record<string, NamedTensor> = {}, metadata: Record<string, string> = {}) {
  const tensors = new Map(
    Object.entries({
      'encoder_self.0': uniform(3, 3, false),
      'decoder_self.0': uniform(4, 4, true),
      'cross.0': uniform(4, 3, false),
      ...overrides,
    }),
  );
  return [tensors, { step: '2', run_format_version: '2', pairs: JSON.stringify(PAIRS), ...metadata }] as const;
}

function makeRun(name: string): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'checkpoints'), { recursive: true });
  mkdirSync(join(dir, 'snapshots'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(CONFIG));
  writeFileSync(join(dir, 'vocab.json'), '{"kind": "task", "size": 7}\n');
  writeFileSync(join(dir, 'status.json'), JSON.stringify({ state: 'running', step: 2, time: 1, writer: 'pytorch' }));
  // three whole lines, step 3 again after a resume from the step-2 checkpoint (allowed), and a line being
  // written (no \n yet: allowed)
  writeFileSync(
    join(dir, 'metrics.jsonl'),
    '{"step": 1, "lr": 0.1, "loss": 2.0, "grad_norm": null}\n{"step": 2, "lr": 0.1, "loss": 1.5}\n' +
      '{"step": 3, "lr": 0.1, "loss": 1.4}\n{"step": 3, "lr": 0.1, "loss": 1.3}\n{"step": 4, "l',
  );
  writeFileSync(
    join(dir, 'events.jsonl'),
    '{"step": 2, "check": "dead_head", "severity": "warning", "message": "m", "head": "cross:0.1"}\n',
  );
  writeSafetensors(join(dir, 'checkpoints', 'step-2.safetensors'), checkpointTensors(), { step: '2' });
  writeFileSync(join(dir, 'checkpoints', 'step-4.safetensors.tmp-123-456'), 'half a file'); // a killed writer's
  // killed between the optimizer file and the model file: the checkpoint does not count, and that is allowed
  const moment: NamedTensor = { shape: [7], data: new Float32Array(7) };
  writeSafetensors(
    join(dir, 'checkpoints', 'step-3.optim.safetensors'),
    new Map([
      ['generator.bias.exp_avg', moment],
      ['generator.bias.exp_avg_sq', moment],
    ]),
    { step: '3' },
  );
  writeSafetensors(join(dir, 'snapshots', 'step-2.safetensors'), ...snapshot());
  writeFileSync(join(dir, 'snapshots', 'step-4.safetensors.tmp-123-789'), 'half a snapshot');
  return dir;
}

const valid = makeRun('valid');
/** metrics.jsonl with one line for each step given, in that order. */
const metricsOf = (...steps: number[]) => steps.map((step) => `{"step": ${step}, "lr": 0.1, "loss": 1}\n`).join('');
const brief = (ps: RunProblem[]) => ps.map((p) => [p.file, p.line, p.field]);

test('a folder built from the format passes, with what the format allows', () => {
  assert.deepEqual(checkRunFolder(valid), []);
});

test('steps a resume logs again are not reported, nor a writer.lock', () => {
  const dir = join(work, 'resumes');
  cpSync(valid, dir, { recursive: true });
  writeFileSync(join(dir, 'writer.lock'), JSON.stringify({ pid: 1, host: 'h', started: 1, command: 'train' }));
  // logged every step, back to the step-2 checkpoint twice; started over before any checkpoint
  for (const steps of [
    [1, 2, 3, 4, 3, 3, 4, 5],
    [1, 2, 1, 2, 3],
  ]) {
    writeFileSync(join(dir, 'metrics.jsonl'), metricsOf(...steps));
    assert.deepEqual(checkRunFolder(dir), [], `${steps}`);
  }
  // logged every other step: a resume from step 2 logs step 4 again after 6
  writeFileSync(join(dir, 'metrics.jsonl'), metricsOf(2, 4, 6, 4, 6, 8));
  assert.deepEqual(checkRunFolder(dir), []);
});

test('each planted defect is reported once with its file, line and field', () => {
  const cases: [string, (dir: string) => void, [string, number | undefined, string | undefined], RegExp][] = [
    [
      'config',
      (d) => writeFileSync(join(d, 'config.json'), JSON.stringify({ ...CONFIG, heads: '2' })),
      ['config.json', undefined, 'heads'],
      /integer/,
    ],
    [
      'vocab',
      (d) => writeFileSync(join(d, 'vocab.json'), '{"kind": "task", "size": 9}'),
      ['vocab.json', undefined, 'size'],
      /do not fit the 7/,
    ],
    [
      'status',
      (d) => writeFileSync(join(d, 'status.json'), '{"state": "done", "step": 2, "time": 1}'),
      ['status.json', undefined, 'state'],
      /running, paused/,
    ],
    [
      'metrics',
      (d) =>
        writeFileSync(
          join(d, 'metrics.jsonl'),
          '{"step": 1, "lr": 0.1, "loss": 2}\n{"step": 0, "lr": 0.1, "loss": 2}\n',
        ),
      ['metrics.jsonl', 2, 'step'],
      /steps count from 1/,
    ],
    [
      // a resume from the step-2 checkpoint may log step 3 again (line 4), but none logs step 4 twice
      'two writers interleaved',
      (d) => writeFileSync(join(d, 'metrics.jsonl'), metricsOf(1, 2, 3, 3, 4, 4, 5, 5)),
      ['metrics.jsonl', 6, 'step'],
      /^step 4 again \(line 5 has it\): .*; 2 lines go back in all; two trainers wrote this run at once$/,
    ],
    [
      'out of order',
      (d) => writeFileSync(join(d, 'metrics.jsonl'), metricsOf(1, 3, 2)),
      ['metrics.jsonl', 3, 'step'],
      /^step 2 after step 3: .*checkpoints\/ has none from which step 2 comes next/,
    ],
    [
      // the engine drops the lines past its checkpoint when it resumes: even step 3 after the step-2 checkpoint
      'engine step twice',
      (d) => {
        writeFileSync(join(d, 'config.json'), JSON.stringify({ ...CONFIG, writer: 'engine' }));
        writeFileSync(join(d, 'metrics.jsonl'), metricsOf(1, 2, 3, 3));
      },
      ['metrics.jsonl', 4, 'step'],
      /^step 3 again \(line 3 has it\): the engine writes each step once/,
    ],
    [
      'events',
      (d) => writeFileSync(join(d, 'events.jsonl'), '{"step": 2, "check": "c", "severity": "error", "message": "m"}\n'),
      ['events.jsonl', 1, 'severity'],
      /"warning" or "breakpoint"/,
    ],
    [
      'missing tensor',
      (d) => {
        const t = checkpointTensors();
        t.delete('decoder.layers.0.norm3.bias');
        writeSafetensors(join(d, 'checkpoints', 'step-2.safetensors'), t, { step: '2' });
      },
      ['checkpoints/step-2.safetensors', undefined, 'decoder.layers.0.norm3.bias'],
      /missing/,
    ],
    [
      'row sum',
      (d) => {
        const half = uniform(3, 3, false);
        half.data[4] = 0; // query 1 of head 0 now sums to 2/3
        writeSafetensors(join(d, 'snapshots', 'step-2.safetensors'), ...snapshot({ 'encoder_self.0': half }));
      },
      ['snapshots/step-2.safetensors', undefined, 'encoder_self.0'],
      /row 1 \(query 1\) sums to 0\.66/,
    ],
    [
      'causality',
      (d) =>
        writeSafetensors(
          join(d, 'snapshots', 'step-2.safetensors'),
          ...snapshot({ 'decoder_self.0': uniform(4, 4, false) }),
        ),
      ['snapshots/step-2.safetensors', undefined, 'decoder_self.0'],
      /query 0 attends to later key 1/,
    ],
    [
      'pairs',
      (d) => writeSafetensors(join(d, 'snapshots', 'step-2.safetensors'), ...snapshot({}, { pairs: '[{"src": []}]' })),
      ['snapshots/step-2.safetensors', undefined, '__metadata__.pairs'],
      /pair 0 must be/,
    ],
    [
      'snapshot step',
      (d) => writeSafetensors(join(d, 'snapshots', 'step-2.safetensors'), ...snapshot({}, { step: '3' })),
      ['snapshots/step-2.safetensors', undefined, '__metadata__.step'],
      /the name says 2/,
    ],
  ];
  for (const [name, plant, where, message] of cases) {
    const dir = join(work, `defect-${name.replace(/ /g, '-')}`);
    cpSync(valid, dir, { recursive: true });
    plant(dir);
    const problems = checkRunFolder(dir);
    assert.deepEqual(brief(problems), [where], `${name}: ${JSON.stringify(problems)}`);
    assert.match(problems[0]!.message, message, name);
  }
});

test('check-run exits 0 on a valid folder, 1 listing the problems, 2 on a usage error', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), 'check-run', ...args], { encoding: 'utf8' });
  assert.equal(cli(valid).status, 0);
  const broken = join(work, 'broken');
  cpSync(valid, broken, { recursive: true });
  writeFileSync(join(broken, 'metrics.jsonl'), '{"step": 1, "lr": 0.1, "loss": 2}\nnot json\n');
  const r = cli(broken);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /broken\/metrics\.jsonl:2: not valid JSON/);
  assert.match(r.stdout, /1 problem\n$/);
  assert.equal(cli().status, 2);
  assert.equal(cli(join(work, 'absent')).status, 1);
});

test('ablations.json (Ablate Heads…, docs/RUN_FOLDER.md) passes as written; a bad record is named by index and field', () => {
  const dir = join(work, 'ablations');
  cpSync(valid, dir, { recursive: true });
  const record = {
    ablation: { heads: ['cross:0.1'], mode: 'zero' },
    runDir: dir,
    step: 2,
    metric: 'exact_match_percent',
    sentences: 10,
    intact: 80,
    ablated: 40,
    time: 1_700_000_000_000,
  };
  writeFileSync(
    join(dir, 'ablations.json'),
    `${JSON.stringify([record, { ...record, ablation: { heads: [], mode: 'mean' } }])}\n`,
  );
  assert.deepEqual(checkRunFolder(dir), []);
  writeFileSync(join(dir, 'ablations.json'), JSON.stringify([record, { ...record, ablated: 'forty' }]));
  const problems = checkRunFolder(dir);
  assert.deepEqual(brief(problems), [['ablations.json', undefined, '[1].ablated']], JSON.stringify(problems));
  assert.match(problems[0]!.message, /finite number/);
  writeFileSync(join(dir, 'ablations.json'), '[{');
  assert.deepEqual(brief(checkRunFolder(dir)), [['ablations.json', undefined, undefined]]);
});

test('checkRunFolder names every file it reads, in order, and no write in progress', () => {
  const read = (dir: string) => {
    const files: string[] = [];
    checkRunFolder(dir, files);
    return files;
  };
  writeFileSync(join(valid, 'snapshots', 'step-9.safetensors.tmp-1-2'), 'half');
  assert.deepEqual(read(valid), [
    'config.json',
    'vocab.json',
    'status.json',
    'metrics.jsonl',
    'events.jsonl',
    'checkpoints/step-2.safetensors',
    'checkpoints/step-3.optim.safetensors',
    'snapshots/step-2.safetensors',
  ]);
  rmSync(join(valid, 'snapshots', 'step-9.safetensors.tmp-1-2'));
  assert.deepEqual(read(join(work, 'absent')), []);
});
