import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attentionPage } from '../../src/protocol/pages/attention';
import { beamPage } from '../../src/protocol/pages/beam';
import { dashboardPage } from '../../src/protocol/pages/dashboard';
import { headPage } from '../../src/protocol/pages/head';
import { headsPage } from '../../src/protocol/pages/heads';
import { importancePage } from '../../src/protocol/pages/importance';
import { ablationsPage } from '../../src/protocol/pages/ablations';
import { runCheckPage } from '../../src/protocol/pages/runCheck';
import { globalPage } from '../../src/protocol/pages/global';
import { positionalPage } from '../../src/protocol/pages/positional';
import {
  checkFromPage,
  checkPersistedState,
  checkToPage,
  type PageProtocol,
  type PanelKind,
  WEBVIEW_PROTOCOL_VERSION,
} from '../../src/protocol/webview';

const PAGES: Record<PanelKind, PageProtocol> = {
  dashboard: dashboardPage,
  attention: attentionPage,
  head: headPage,
  positional: positionalPage,
  heads: headsPage,
  beam: beamPage,
  importance: importancePage,
  ablations: ablationsPage,
  runCheck: runCheckPage,
  global: globalPage,
};
/** The page each message type below is for (a state: its panel's; shared ones: the first page that takes them). */
const PAGE_OF: Record<string, PageProtocol> = {
  attention: attentionPage,
  metrics: dashboardPage,
  schedule: dashboardPage,
  positional: positionalPage,
  snapshots: headPage,
  cursor: dashboardPage,
  openHead: attentionPage,
  inspectInput: attentionPage,
};
const pageOf = (m: unknown): PageProtocol => {
  const r = (m ?? {}) as { type?: string; state?: { panel?: string } };
  if (r.type === 'state') return PAGES[r.state?.panel as PanelKind] ?? dashboardPage;
  return PAGE_OF[r.type ?? ''] ?? attentionPage;
};
/** Checks a message as the page it is for checks it. */
const checkToWebview = (m: unknown) => checkToPage(pageOf(m), m);
const checkFromWebview = (m: unknown) => checkFromPage(pageOf(m), m);

const v = WEBVIEW_PROTOCOL_VERSION;
const enc = (S: number, data = new Float32Array(S * S).fill(1 / S)) => ({
  kind: 'encoder_self',
  shape: [1, 1, S, S],
  weights: data,
});
const attention = (over: Record<string, unknown> = {}) => ({
  type: 'attention',
  v,
  source: { runDir: '/runs/r', step: 3, input: 'probe' },
  srcTokens: ['a', 'b'],
  tgtTokens: ['x'],
  maps: [enc(2)],
  ...over,
});

test('well-formed messages pass', () => {
  assert.equal(checkToWebview(attention()), undefined);
  assert.equal(
    checkToWebview({
      type: 'metrics',
      v,
      rows: [{ step: 1, loss: 2, lr: 1e-4, tokensPerSec: 10, gradNorm: 1, valLoss: 2.5 }],
    }),
    undefined,
  );
  assert.equal(
    checkToWebview({ type: 'schedule', v, totalSteps: 10, warmupSteps: 4, dModel: 8, points: [{ step: 1, lr: 0.1 }] }),
    undefined,
  );
  assert.equal(checkToWebview({ type: 'positional', v, shape: [2, 2], values: new Float32Array(4) }), undefined);
  assert.equal(
    checkToWebview({
      type: 'state',
      v,
      state: { panel: 'dashboard', header: null, rows: [], schedule: null, cursor: 3, events: [] },
    }),
    undefined,
  );
  assert.equal(
    checkToWebview({
      type: 'state',
      v,
      state: {
        panel: 'head',
        header: { runDir: '/r/a', run: 'a', step: null, input: 'probe', live: true, checkpoints: [5], vocab: true },
        head: { kind: 'cross', layer: 0, head: 1 },
        attention: null,
        snapshots: [],
        losses: [{ step: 5, loss: 2.5 }],
        cursor: null,
      },
    }),
    undefined,
  );
  assert.equal(checkFromWebview({ type: 'ready', v, panel: 'attention' }), undefined);
  assert.equal(checkFromWebview({ type: 'openHead', v, kind: 'cross', layer: 2, head: 5 }), undefined);
  assert.equal(checkFromWebview({ type: 'cursor', v, step: 250 }), undefined);
  assert.equal(
    checkFromWebview({ type: 'inspectInput', v, input: { kind: 'text', src: 'a b', tgt: 'c' }, step: 5 }),
    undefined,
  );
  assert.equal(checkFromWebview({ type: 'inspectInput', v, input: { kind: 'probe' } }), undefined);
  assert.equal(
    checkFromWebview({ type: 'export', v, format: 'png', name: 'a.png', dataUrl: 'data:image/png;base64,AA==' }),
    undefined,
  );
  assert.equal(checkFromWebview({ type: 'export', v, format: 'csv', name: 'a.csv', text: 'x\n' }), undefined);
});

test('malformed messages are rejected with the field named', () => {
  const cases: [unknown, string][] = [
    [null, 'message must be an object, got null'],
    [{ type: 'nope', v }, 'message.type must be one of'],
    [{ type: 'metrics', v: 1, rows: [] }, 'metrics.v must be protocol version 3, got 1'],
    [{ type: 'metrics', rows: [] }, 'metrics.v must be protocol version 3'],
    [
      { type: 'metrics', v, rows: [{ step: 1, loss: 'x', lr: 1, tokensPerSec: 1, gradNorm: 1 }] },
      'metrics.rows[0].loss must be a finite number, got string',
    ],
    [
      { type: 'metrics', v, rows: [{ step: 1, loss: 1, lr: 1, tokensPerSec: 1, gradNorm: 1, valLoss: null }] },
      'metrics.rows[0].valLoss must be a finite number, got null',
    ],
    [
      attention({ maps: [{ kind: 'encoder_self', shape: [1, 1, 2, 2], weights: [0.5, 0.5, 0.5, 0.5] }] }),
      'attention.maps[0].weights must be a Float32Array, got array',
    ],
    [
      attention({ maps: [{ kind: 'encoder_self', shape: [1, 1, 2, 2], weights: new Float64Array(4) }] }),
      'attention.maps[0].weights must be a Float32Array, got Float64Array',
    ],
    [
      attention({ maps: [{ kind: 'self', shape: [1, 1, 2, 2], weights: new Float32Array(4) }] }),
      'attention.maps[0].kind must be one of encoder_self, decoder_self, cross',
    ],
    [attention({ maps: [enc(3)] }), 'attention.maps[0].shape[2] must be 2 (srcTokens.length), got 3'],
    [
      attention({ maps: [{ kind: 'cross', shape: [1, 1, 1, 3], weights: new Float32Array(3) }] }),
      'attention.maps[0].shape[3] must be 2 (srcTokens.length), got 3',
    ],
    [
      attention({ maps: [{ kind: 'encoder_self', shape: [1, 2, 2, 2], weights: new Float32Array(4) }] }),
      'attention.maps[0].weights must hold 8 values (shape 1×2×2×2), got 4',
    ],
    [
      attention({ maps: [{ kind: 'encoder_self', shape: [1, 1, 2], weights: new Float32Array(4) }] }),
      'attention.maps[0].shape must be an array of 4 dimensions, got 3',
    ],
    [
      attention({ maps: [{ kind: 'encoder_self', shape: [1, 0, 2, 2], weights: new Float32Array(0) }] }),
      'attention.maps[0].shape[1] must be a whole number ≥ 1, got 0',
    ],
    [attention({ maps: [enc(2), enc(2)] }), 'attention.maps[1].kind encoder_self appears twice'],
    [attention({ srcTokens: ['a', 2] }), 'attention.srcTokens[1] must be a string, got number'],
    [
      { type: 'positional', v, shape: [2, 3], values: new Float32Array(5) },
      'positional.values must hold 6 values (shape 2×3), got 5',
    ],
    [
      {
        type: 'snapshots',
        v,
        items: [{ source: { runDir: '/r', step: 1, input: 'probe' }, srcTokens: [], tgtTokens: [], maps: 'x' }],
      },
      'snapshots.items[0].maps must be an array, got string',
    ],
    [
      {
        type: 'state',
        v,
        state: {
          panel: 'attention',
          header: null,
          attention: null,
          selected: { kind: 'cross', layer: -1, head: 0 },
          roles: [],
        },
      },
      'state.state.selected.layer must be a whole number ≥ 0, got -1',
    ],
    [
      {
        type: 'state',
        v,
        state: { panel: 'dashboard', header: { runDir: '/r' }, rows: [], schedule: null, cursor: null, events: [] },
      },
      'state.state.header.run must be a string, got undefined',
    ],
    [{ type: 'cursor', v, step: -2 }, 'cursor.step must be a whole number ≥ 0, got -2'],
    [{ type: 'state', v, state: { panel: 'sidebar' } }, 'state.state.panel must be one of dashboard, got "sidebar"'],
    [
      { type: 'schedule', v, totalSteps: 0, warmupSteps: 4, dModel: 8, points: [] },
      'schedule.totalSteps must be a whole number ≥ 1, got 0',
    ],
  ];
  for (const [m, want] of cases) {
    const why = checkToWebview(m);
    assert.ok(
      why?.includes(want),
      `${JSON.stringify(m, (_, x) => (x instanceof Float32Array ? `F32[${x.length}]` : x))}\n  got:  ${why}\n  want: ${want}`,
    );
  }
});

test('malformed webview messages are rejected with the field named', () => {
  const cases: [unknown, string][] = [
    [{ type: 'openHead', v, kind: 'cross', layer: 1.5, head: 0 }, 'openHead.layer must be a whole number ≥ 0, got 1.5'],
    [{ type: 'openHead', v, kind: 'cross', layer: 1 }, 'openHead.head must be a whole number ≥ 0'],
    [{ type: 'ready', v, panel: 'sidebar' }, 'ready.panel must be one of'],
    [
      { type: 'export', v, format: 'gif', name: 'a.gif', dataUrl: 'data:,' },
      'export.format must be one of png, svg, csv, json',
    ],
    [{ type: 'export', v, format: 'png', name: 'a.png' }, 'export.dataUrl must be a data: URL for format png'],
    [
      { type: 'export', v, format: 'png', name: 'a.png', dataUrl: 'https://example.com/x.png' },
      'export.dataUrl must start with data:',
    ],
    [{ type: 'export', v, format: 'csv', name: 'a.csv' }, 'export.text must be a string for format csv'],
    [
      { type: 'export', v, format: 'csv', name: '../../etc/passwd', text: '' },
      'export.name must be a file name without folders',
    ],
    [{ type: 'error', v, message: 42 }, 'error.message must be a string, got number'],
    [{ type: 'cursor', v, step: 'x' }, 'cursor.step must be a whole number ≥ 0, got "x"'],
    [{ type: 'inspectInput', v, input: { kind: 'text' } }, 'inspectInput.input.src must be a string, got undefined'],
    [
      { type: 'inspectInput', v, input: { kind: 'ids', src: [5, -1] } },
      'inspectInput.input.src[1] must be a whole number ≥ 0',
    ],
    [{ type: 'inspectInput', v, input: { kind: 'guess' } }, 'inspectInput.input.kind must be one of probe, text, ids'],
    [{ type: 'ready', v: '1', panel: 'head' }, 'ready.v must be protocol version 3, got "1"'],
  ];
  for (const [m, want] of cases) {
    const why = checkFromWebview(m);
    assert.ok(why?.includes(want), `got: ${why}\nwant: ${want}`);
  }
});

test('restored webview state is validated', () => {
  assert.equal(
    checkPersistedState(
      { v, panel: 'head', head: { kind: 'decoder_self', layer: 0, head: 3 }, snapshotStep: 100 },
      'head',
    ),
    undefined,
  );
  assert.equal(checkPersistedState({ v, panel: 'attention' }, 'attention'), undefined);
  assert.match(checkPersistedState({ v, panel: 'attention' }, 'head')!, /state\.panel must be one of head/);
  assert.match(checkPersistedState({ v: 0, panel: 'head' }, 'head')!, /state\.v must be protocol version 3, got 0/);
  assert.match(
    checkPersistedState({ v, panel: 'head', head: { kind: 'x', layer: 0, head: 0 } }, 'head')!,
    /state\.head\.kind must be one of/,
  );
  assert.match(checkPersistedState('junk', 'head')!, /state must be an object, got string/);
});

test("a page is sent only its own panel's messages, and posts only its own", () => {
  const metrics = { type: 'metrics', v, rows: [] };
  assert.equal(checkToPage(dashboardPage, metrics), undefined);
  assert.equal(checkToPage(headsPage, metrics), undefined, 'the Heads panel draws the loss under its roles');
  for (const page of [attentionPage, headPage, positionalPage, beamPage])
    assert.match(checkToPage(page, metrics)!, /^message\.type must be one of .*, got "metrics"$/);
  const dashboardState = { panel: 'dashboard', header: null, rows: [], schedule: null, cursor: null, events: [] };
  assert.match(
    checkToPage(attentionPage, { type: 'state', v, state: dashboardState })!,
    /state\.state\.panel must be one of attention, got "dashboard"/,
  );
  assert.match(checkFromPage(dashboardPage, { type: 'beamNode', v, node: 1 })!, /message\.type must be one of/);
  assert.equal(checkFromPage(beamPage, { type: 'beamNode', v, node: 1 }), undefined);
});

test('a block request carries an id and its reply echoes one', () => {
  const range = { kind: 'cross', layer: 0, head: 1, q0: 0, q1: 2, k0: 0, k1: 2 };
  assert.equal(checkFromPage(attentionPage, { type: 'requestBlock', v, id: 7, ...range }), undefined);
  assert.match(checkFromPage(attentionPage, { type: 'requestBlock', v, ...range })!, /requestBlock\.id must be/);
  const block = { ...range, pool: { rows: 1, cols: 1 }, shape: [2, 2], weights: new Float32Array(4) };
  assert.equal(checkToPage(attentionPage, { type: 'attentionBlock', v, id: 7, ...block }), undefined);
  assert.match(checkToPage(attentionPage, { type: 'attentionBlock', v, ...block })!, /attentionBlock\.id must be/);
});

test('the value-weighted toggle and a score request carry an id, and their replies echo one', () => {
  assert.equal(checkFromPage(attentionPage, { type: 'showValueWeighted', v, id: 3, on: true }), undefined);
  assert.match(checkFromPage(attentionPage, { type: 'showValueWeighted', v, on: true })!, /showValueWeighted\.id/);
  assert.match(checkFromPage(attentionPage, { type: 'showValueWeighted', v, id: 3 })!, /showValueWeighted\.on/);
  assert.equal(checkToPage(attentionPage, { type: 'valueWeighted', v, id: 3, error: 'no run' }), undefined);
  assert.match(checkToPage(attentionPage, { type: 'valueWeighted', v, error: 'no run' })!, /valueWeighted\.id/);
  const ask = { type: 'requestScores', v, id: 4, kind: 'cross', layer: 0, head: 1, query: 2 };
  assert.equal(checkFromPage(headPage, ask), undefined);
  assert.match(checkFromPage(headPage, { ...ask, query: -1 })!, /requestScores\.query/);
  assert.match(checkFromPage(attentionPage, ask)!, /message\.type must be one of/);
  assert.equal(checkToPage(headPage, { type: 'headScores', v, id: 4, error: 'refused' }), undefined);
  assert.match(
    checkToPage(headPage, { type: 'headScores', v, id: 4, scores: { kind: 'cross' } })!,
    /headScores\.scores/,
  );
});
