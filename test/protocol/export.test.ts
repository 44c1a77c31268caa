/**
 * The one export format (src/protocol/export.ts), which the panels' buttons, Export View and the
 * CLI all write: every expected file below is written out by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Attention } from '../../src/protocol/attention';
import {
  attentionCsv,
  attentionJson,
  csvField,
  headCsv,
  headFileName,
  headJson,
  metricsCsv,
  positionalCsv,
  markdownTable,
} from '../../src/protocol/export';

/** 1 layer, 2 heads of cross attention: 2 target tokens × 3 source tokens. */
const cross: Attention = {
  source: {
    runDir: '/runs/rev',
    step: 1500,
    checkpoint: '/runs/rev/checkpoints/step-1500.safetensors',
    input: 'input',
  },
  srcTokens: ['a', 'b,c', '</s>'],
  tgtTokens: ['<s>', 'x'],
  maps: [
    {
      kind: 'cross',
      shape: [1, 2, 2, 3],
      weights: new Float32Array([0.5, 0.25, 0.25, 0, 1, 0, /* head 2 */ 1, 0, 0, 0.125, 0.375, 0.5]),
    },
  ],
};

test('CSV quoting per RFC 4180', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField(' pad'), '" pad"');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(0.25), '0.25');
});

test('a head as CSV: what it shows in # lines, then key tokens across and query tokens down', () => {
  assert.equal(
    headCsv(cross, { kind: 'cross', layer: 0, head: 1 }),
    [
      '# run: /runs/rev',
      '# checkpoint: /runs/rev/checkpoints/step-1500.safetensors',
      '# step: 1500',
      '# input: a b,c </s>',
      '# head_id: cross:0.1',
      '# kind: cross',
      '# layer: 0',
      '# head: 1',
      'query\\key,a,"b,c",</s>',
      '<s>,1,0,0',
      'x,0.125,0.375,0.5',
      '',
    ].join('\n'),
  );
});

test('a head as JSON: the same context as fields, weights [query][key], snake_case names', () => {
  assert.deepEqual(JSON.parse(headJson(cross, { kind: 'cross', layer: 0, head: 0 })), {
    run: '/runs/rev',
    checkpoint: '/runs/rev/checkpoints/step-1500.safetensors',
    step: 1500,
    input: 'a b,c </s>',
    head_id: 'cross:0.0',
    kind: 'cross',
    layer: 0,
    head: 0,
    query_tokens: ['<s>', 'x'],
    key_tokens: ['a', 'b,c', '</s>'],
    weights: [
      [0.5, 0.25, 0.25],
      [0, 1, 0],
    ],
  });
  assert.equal(headFileName(cross, { kind: 'cross', layer: 0, head: 1 }, 'csv'), 'cross-0.1-step1500.csv');
  assert.throws(() => headJson(cross, { kind: 'encoder_self', layer: 0, head: 0 }), /no head encoder_self:0\.0/);
});

test('all of an attention: JSON nests [layer][head][query][key] per kind; CSV has a line per weight', () => {
  const probe: Attention = { ...cross, source: { runDir: '/runs/rev', step: 25, input: 'probe' } };
  assert.deepEqual(JSON.parse(attentionJson(probe)), {
    run: '/runs/rev',
    step: 25,
    input: 'probe',
    src_tokens: ['a', 'b,c', '</s>'],
    tgt_tokens: ['<s>', 'x'],
    cross: [
      [
        [
          [0.5, 0.25, 0.25],
          [0, 1, 0],
        ],
        [
          [1, 0, 0],
          [0.125, 0.375, 0.5],
        ],
      ],
    ],
  });
  const lines = attentionCsv(probe).trim().split('\n');
  assert.deepEqual(lines.slice(0, 5), [
    '# run: /runs/rev',
    '# step: 25',
    '# input: probe',
    'kind,layer,head,query,key,query_token,key_token,weight',
    'cross,0,0,0,0,<s>,a,0.5',
  ]);
  assert.equal(lines.length, 3 + 1 + 12);
  assert.equal(lines[lines.length - 1], 'cross,0,1,1,2,x,</s>,0.5');
  assert.equal(lines[5], 'cross,0,0,0,1,<s>,"b,c",0.25');
});

test('metrics CSV: one line a row, optional columns empty; positional CSV: a row per position', () => {
  const csv = metricsCsv(
    [
      { step: 1, loss: 9.5, lr: 1e-7, tokensPerSec: 1200, gradNorm: 3 },
      { step: 2, loss: 9, lr: 2e-7, tokensPerSec: 1250, gradNorm: 2.5, valLoss: 9.25, valBleu: 0.5 },
    ],
    { run: '/runs/rev' },
  );
  assert.equal(
    csv,
    '# run: /runs/rev\nstep,loss,lr,tokensPerSec,gradNorm,valLoss,valBleu\n1,9.5,1e-7,1200,3,,\n2,9,2e-7,1250,2.5,9.25,0.5\n',
  );
  assert.equal(positionalCsv([2, 2], new Float32Array([0, 1, 0.5, 0.25])), 'position,dim0,dim1\n0,0,1\n1,0.5,0.25\n');
});

test('a head exported value-weighted holds its norms in place of the weights, says so, and is named so', () => {
  const norms = new Float32Array([0, 0, 0, 0, 0, 0, /* head 2 */ 2, 0.5, 0, 0.25, 0.75, 1.5]);
  const withNorms: Attention = { ...cross, maps: [{ ...cross.maps[0]!, valueWeighted: norms }] };
  const ref = { kind: 'cross' as const, layer: 0, head: 1 };
  const csv = headCsv(withNorms, ref, true).split('\n');
  assert.ok(csv.includes('# values: value_weighted ‖α·vW^O‖ (Kobayashi et al., 2020)'), csv.join('\n'));
  assert.deepEqual(csv.slice(-3), ['<s>,2,0.5,0', 'x,0.25,0.75,1.5', '']);
  const json = JSON.parse(headJson(withNorms, ref, true));
  assert.deepEqual(json.value_weighted, [
    [2, 0.5, 0],
    [0.25, 0.75, 1.5],
  ]);
  assert.equal(json.weights, undefined);
  assert.equal(headFileName(withNorms, ref, 'json', true), 'cross-0.1-step1500-value-weighted.json');
  assert.throws(() => headCsv(cross, ref, true), /no value-weighted maps of cross/);
});

test('a Markdown table: header, rule, one line per row; a pipe or line break in a cell cannot split its row', () => {
  assert.equal(
    markdownTable(
      ['file', 'message'],
      [
        ['a.json', 'x | y'],
        ['b.jsonl', 'two\nlines'],
        ['c', undefined],
      ],
    ),
    '| file | message |\n| --- | --- |\n| a.json | x \\| y |\n| b.jsonl | two lines |\n| c |  |',
  );
});
