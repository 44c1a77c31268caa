// The extension-side panel classes under a fake vscode module (./fake-vscode, imported first).
import { FakePanel, FakeUri, created, saveDialog, serializers, steps, told, written } from './fake-vscode';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AttentionPanel,
  DashboardPanel,
  HeadInspectorPanel,
  PANEL_VIEW_TYPES,
  Panels,
  registerPanels,
} from '../../src/extension/panels';
import { WEBVIEW_PROTOCOL_VERSION } from '../../src/protocol/webview';
import { panelHtml } from '../../src/extension/panels/html';

const v = WEBVIEW_PROTOCOL_VERSION;
const ext = FakeUri.file('/ext');
const row = (step: number) => ({ step, loss: 5 - step / 100, lr: 1e-4, tokensPerSec: 900, gradNorm: 1 });
const attention = (S = 2) => ({
  source: { runDir: '/runs/r', step: 10, input: 'probe' as const },
  srcTokens: Array.from({ length: S }, (_, i) => `s${i}`),
  tgtTokens: ['t0'],
  maps: [
    {
      kind: 'encoder_self' as const,
      shape: [1, 1, S, S] as [number, number, number, number],
      weights: new Float32Array(S * S).fill(1 / S),
    },
  ],
});

function fresh(): { panels: Panels; log: string[] } {
  const log: string[] = [];
  const panels = new Panels(ext as never, (l) => log.push(l));
  return { panels, log };
}
const lastPanel = () => created[created.length - 1];
const posted = (p: FakePanel) =>
  p.webview.posted as { type: string; v: number; state?: Record<string, unknown>; rows?: unknown[] }[];

test('HTML: CSP with a fresh random nonce, no eval but of WebAssembly, scripts only from dist/webview and plotly', () => {
  const { panels } = fresh();
  panels.openDashboard();
  const a = lastPanel();
  const html = a.webview.html;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1].replace(/&#39;/g, "'");
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1];
  assert.equal(Buffer.from(nonce, 'base64').length, 16, '16 random bytes');
  assert.match(csp, /default-src 'none'/);
  // No eval of JavaScript; WebAssembly may compile (webview/lib/poolMax.wat), and nothing else is allowed.
  assert.doesNotMatch(csp, /'unsafe-eval'/);
  assert.match(csp, /script-src 'nonce-[^']+' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /script-src[^;]*unsafe-inline/);
  const scripts = [...html.matchAll(/<script nonce="([^"]+)"( id="[^"]+")? src="([^"]+)"( async)?><\/script>/g)];
  assert.deepEqual(
    scripts.map((m) => [m[1], m[3], m[4] ?? '']),
    [
      // async: the page draws its maps while plotly loads (issue 26 item 7)
      [nonce, 'https://fake.vscode-cdn.net/ext/node_modules/plotly.js-dist-min/plotly.min.js', ' async'],
      [nonce, 'https://fake.vscode-cdn.net/ext/dist/webview/dashboard.js', ''],
    ],
  );
  // One inline script, with the nonce: the guard that says so when the panel's scripts fail to start.
  const inline = [...html.matchAll(/<script nonce="([^"]+)">([^<]*)<\/script>/g)];
  assert.equal(inline.length, 1);
  assert.equal(inline[0][1], nonce);
  assert.match(inline[0][2], /__panelStarted/);
  assert.equal((html.match(/<script/g) ?? []).length, 3, 'nothing else runs');
  assert.deepEqual(
    a.webview.options.localResourceRoots?.map((u) => u.path),
    ['/ext/dist/webview', '/ext/node_modules/plotly.js-dist-min'],
  );
  assert.equal(a.webview.options.enableScripts, true);
  panels.dispose();
  panels.openDashboard();
  const nonce2 = /<script nonce="([^"]+)"/.exec(lastPanel().webview.html)![1];
  assert.notEqual(nonce2, nonce, 'a new page gets a new nonce');
  panels.dispose();
});

test('the Global Q/K page loads no plotly.js (it draws its own canvas); the others do', () => {
  const page = (panel: 'global' | 'heads') =>
    panelHtml({
      panel,
      title: 't',
      cspSource: 'src',
      nonce: 'n0',
      plotlyUri: 'P/plotly.min.js',
      scriptUri: `S/${panel}.js`,
    });
  const sources = (html: string) => [...html.matchAll(/<script [^>]*src="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(sources(page('global')), ['S/global.js']);
  assert.deepEqual(sources(page('heads')), ['P/plotly.min.js', 'S/heads.js']);
});

test('nothing is posted before ready; ready and requestState get the full state', async () => {
  const { panels, log } = fresh();
  panels.appendMetrics([row(1), row(2)]);
  const dash = panels.openDashboard();
  assert.equal(panels.openDashboard(), dash, 'one dashboard a window');
  const p = lastPanel();
  assert.equal(p.reveals, 1);
  panels.appendMetrics([row(3)]);
  assert.equal(p.webview.posted.length, 0, 'not ready yet: dropped, the state will carry it');
  p.fromWebview({ type: 'ready', v, panel: 'dashboard' });
  assert.equal(posted(p).length, 1, JSON.stringify(posted(p).map((m) => m.type)));
  assert.equal(posted(p)[0].type, 'state');
  assert.equal(posted(p)[0].v, v);
  assert.deepEqual(
    (posted(p)[0].state!.rows as { step: number }[]).map((r) => r.step),
    [1, 2, 3],
  );
  panels.appendMetrics([row(4)]);
  assert.deepEqual(posted(p)[1], { type: 'metrics', v, rows: [row(4)] });
  p.fromWebview({ type: 'requestState', v });
  assert.equal(posted(p)[2].type, 'state');
  assert.equal(log.length, 0, log.join('\n'));
  panels.dispose();
});

test('malformed messages from the webview are logged with the field, never thrown', () => {
  const { panels, log } = fresh();
  panels.openAttention();
  const p = lastPanel();
  assert.doesNotThrow(() => p.fromWebview({ type: 'openHead', v, kind: 'cross', layer: 'x', head: 0 }));
  assert.doesNotThrow(() => p.fromWebview('garbage'));
  assert.doesNotThrow(() => p.fromWebview({ type: 'ready', v: 7, panel: 'attention' }));
  assert.match(
    log[0],
    /attention panel: malformed message from the webview ignored: openHead\.layer must be a whole number ≥ 0/,
  );
  assert.match(log[1], /message must be an object, got string/);
  assert.match(log[2], new RegExp(`ready\\.v must be protocol version ${v}, got 7`));
  assert.equal(p.webview.posted.length, 0, 'a malformed ready does not count');
  panels.dispose();
});

test('a hidden panel gets nothing; shown again, it is pinged, and once it says ready it gets a full state', () => {
  const { panels } = fresh();
  panels.openDashboard();
  const p = lastPanel();
  p.fromWebview({ type: 'ready', v, panel: 'dashboard' });
  p.setVisible(false);
  const before = p.webview.posted.length;
  panels.appendMetrics([row(1), row(2)]);
  panels.appendMetrics([row(3)]);
  assert.equal(p.webview.posted.length, before);
  p.setVisible(true);
  // The page may have been reloaded or may have survived: nothing but a ping until it says ready.
  assert.deepEqual(
    posted(p)
      .slice(before)
      .map((m) => m.type),
    ['ping'],
  );
  p.fromWebview({ type: 'ready', v, panel: 'dashboard' });
  const last = posted(p)[posted(p).length - 1];
  assert.equal(last.type, 'state');
  assert.deepEqual(
    (last.state!.rows as { step: number }[]).map((r) => r.step),
    [1, 2, 3],
  );
  panels.dispose();
});

test('attention is posted as the extension holds it: weights stay a Float32Array (the page validates)', () => {
  const { panels, log } = fresh();
  const att = panels.openAttention();
  const p = lastPanel();
  p.fromWebview({ type: 'ready', v, panel: 'attention' });
  const n = p.webview.posted.length;
  att.showAttention(attention(2));
  assert.equal(posted(p)[n].type, 'attention');
  assert.ok(
    (p.webview.posted[n] as { maps: { weights: unknown }[] }).maps[0].weights instanceof Float32Array,
    'weights stay a Float32Array',
  );
  assert.equal(log.length, 0, log.join('\n'));
  panels.dispose();
});

test('dispose: closing by the user or by code cleans up once; a new panel can open', () => {
  const { panels } = fresh();
  const dash = panels.openDashboard();
  const p = lastPanel();
  assert.ok(p.listeners() > 0);
  p.dispose(); // the user closed it
  assert.equal(DashboardPanel.slot.current, undefined);
  assert.equal(dash.isDisposed, true);
  assert.equal(p.listeners(), 0, 'every listener removed');
  dash.dispose();
  assert.equal(p.disposeCalls, 2, 'disposing again is a no-op for the panel class');
  const again = panels.openDashboard();
  assert.notEqual(again, dash);
  const q = lastPanel();
  again.dispose(); // by code
  assert.equal(q.disposeCalls, 1);
  assert.equal(DashboardPanel.slot.current, undefined);
  panels.dispose();
});

test("a page's requests (openHead) come out of the hub; the inspector opens on that head", () => {
  const { panels } = fresh();
  panels.showAttention(attention(3));
  panels.openAttention();
  const a = lastPanel();
  const requests: unknown[] = [];
  panels.onDidRequest((r) => requests.push(r));
  a.fromWebview({ type: 'ready', v, panel: 'attention' });
  a.fromWebview({ type: 'openHead', v, kind: 'encoder_self', layer: 0, head: 0 });
  assert.deepEqual(requests, [
    { from: 'attention', request: { type: 'openHead', v, kind: 'encoder_self', layer: 0, head: 0 } },
  ]);
  panels.openHeadInspector({ kind: 'encoder_self', layer: 0, head: 0 }); // what the Viewer does with it
  assert.ok(HeadInspectorPanel.slot.current, 'inspector opened');
  const h = lastPanel();
  assert.equal(h.viewType, 'attentionDebugger.headInspector');
  assert.equal(h.title, 'Head encoder_self:0.0');
  h.fromWebview({ type: 'ready', v, panel: 'head' });
  const st = posted(h)[0].state as { head: unknown; attention: { source: { step: number } } };
  assert.deepEqual(st.head, { kind: 'encoder_self', layer: 0, head: 0 });
  assert.equal(st.attention.source.step, 10);
  // the attention view remembers the selection for its next state
  a.fromWebview({ type: 'requestState', v });
  assert.deepEqual((posted(a)[posted(a).length - 1].state as { selected: unknown }).selected, {
    kind: 'encoder_self',
    layer: 0,
    head: 0,
  });
  panels.dispose();
});

test('registerPanels registers a serializer per panel; restored state is validated', async () => {
  const subs: { dispose(): void }[] = [];
  const log: string[] = [];
  registerPanels({ extensionUri: ext, subscriptions: subs } as never, (l) => log.push(l));
  assert.deepEqual([...serializers.keys()].sort(), [...PANEL_VIEW_TYPES].sort());
  const restored = new FakePanel('attentionDebugger.headInspector', 'Head');
  await serializers
    .get('attentionDebugger.headInspector')!
    .deserializeWebviewPanel(restored, { v, panel: 'head', head: { kind: 'cross', layer: 1, head: 2 } });
  assert.ok(restored.webview.html.includes('dist/webview/head.js'), 'revived panel gets fresh HTML');
  restored.fromWebview({ type: 'ready', v, panel: 'head' });
  assert.deepEqual((posted(restored)[0].state as { head: unknown }).head, { kind: 'cross', layer: 1, head: 2 });
  const junk = new FakePanel('attentionDebugger.attention', 'Attention');
  await serializers
    .get('attentionDebugger.attention')!
    .deserializeWebviewPanel(junk, { v, panel: 'attention', head: { kind: 'cross', layer: -4, head: 0 } });
  assert.match(
    log.join('\n'),
    /ignoring saved state from an earlier session: state\.head\.layer must be a whole number ≥ 0/,
  );
  assert.equal(AttentionPanel.slot.current?.panel, junk as never, 'the panel is revived all the same');
  for (const s of subs.reverse()) s.dispose();
  assert.equal(serializers.size, 0);
  assert.equal(AttentionPanel.slot.current, undefined);
  assert.equal(HeadInspectorPanel.slot.current, undefined);
});

test('export: the webview’s bytes are written where the user chose', async () => {
  const { panels } = fresh();
  panels.openPositional();
  const p = lastPanel();
  saveDialog.answer = FakeUri.file('/ws/pe.png');
  p.fromWebview({ type: 'export', v, format: 'png', name: 'pe.png', dataUrl: 'data:image/png;base64,iVBORw==' });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(written.length, 1);
  assert.equal(written[0].path, '/ws/pe.png');
  assert.deepEqual(Array.from(written[0].bytes), [0x89, 0x50, 0x4e, 0x47]);
  saveDialog.answer = undefined;
  p.fromWebview({ type: 'export', v, format: 'csv', name: 'pe.csv', text: 'a\n' });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(written.length, 1, 'cancelled dialog writes nothing');
  panels.dispose();
});

test('export: a page’s HTML view is written whole (a temp file renamed over the target) and said with Open', async () => {
  const { panels } = fresh();
  panels.openPositional();
  const p = lastPanel();
  written.length = steps.length = told.length = 0;
  saveDialog.answer = FakeUri.file('/ws/positional.html');
  p.fromWebview({ type: 'export', v, format: 'html', name: 'positional.html', text: '<!DOCTYPE html>' });
  await new Promise((r) => setTimeout(r, 10));
  saveDialog.answer = undefined;
  assert.equal(steps.length, 2, steps.join('; '));
  const tmp = /^write (\/ws\/positional\.html\.tmp-\S+)$/.exec(steps[0]!)?.[1];
  assert.ok(tmp, `first a temp file beside the target: ${steps[0]}`);
  assert.equal(steps[1], `rename ${tmp} /ws/positional.html`);
  assert.deepEqual(
    written.map((w) => [w.path, new TextDecoder().decode(w.bytes)]),
    [['/ws/positional.html', '<!DOCTYPE html>']],
  );
  assert.equal(told.length, 1);
  assert.match(told[0]!.text, /saved the positional view as \/ws\/positional\.html/);
  assert.deepEqual(told[0]!.items, ['Open']);
  panels.dispose();
});

test('a page that never says ready is replaced by one showing the same head, each replacement waiting longer', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { panels, log } = fresh();
  const head = { kind: 'cross' as const, layer: 1, head: 2 };
  panels.openHeadInspector(head);
  const first = lastPanel();
  t.mock.timers.tick(9_999);
  assert.equal(lastPanel(), first, 'not before 10 s');
  t.mock.timers.tick(1);
  const second = lastPanel();
  assert.notEqual(second, first, 'replaced after 10 s');
  assert.equal(first.disposeCalls, 1);
  assert.match(log.at(-1)!, /head panel: its page did not say ready within 10 s/);
  assert.equal(second.title, 'Head cross:1.2', 'the new panel shows the head the old one showed');
  t.mock.timers.tick(19_999);
  assert.equal(lastPanel(), second, 'the replacement gets 20 s');
  t.mock.timers.tick(1);
  const third = lastPanel();
  assert.notEqual(third, second);
  assert.match(log.at(-1)!, /within 20 s/);
  third.fromWebview({ type: 'ready', v, panel: 'head' });
  const state = posted(third).find((m) => m.type === 'state')!.state!;
  assert.deepEqual(state.head, head);
  t.mock.timers.tick(100_000);
  assert.equal(lastPanel(), third, 'a page that said ready stays');
  panels.dispose();
});
