// Live updates reach the pages at most every LIVE_POST_MS (panels/live.ts): a small model's 30
// snapshots a second arrive as a few posts, each with every new snapshot and the newest attention.
import { created, type FakePanel } from './fake-vscode';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Panels } from '../../src/extension/panels';
import { LIVE_POST_MS } from '../../src/extension/panels/live';
import { WEBVIEW_PROTOCOL_VERSION } from '../../src/protocol/webview';
import type { Attention } from '../../src/protocol/attention';

const v = WEBVIEW_PROTOCOL_VERSION;
const at = (step: number): Attention => ({
  source: { runDir: '/runs/r', step, input: 'probe' },
  srcTokens: ['a'],
  tgtTokens: ['b'],
  maps: [{ kind: 'cross', shape: [1, 1, 1, 1], weights: new Float32Array([1]) }],
});
type Post = { type: string; items?: Attention[]; source?: { step: number } };
const posts = (p: FakePanel) => p.webview.posted as Post[];

test('30 live snapshots in a burst reach the head inspector in two posts: the first at once, the rest together', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const panels = new Panels({ fsPath: '/ext', path: '/ext', scheme: 'file' } as never, () => undefined);
  const head = panels.openHeadInspector({ kind: 'cross', layer: 0, head: 0 });
  const page = created[created.length - 1];
  page.fromWebview({ type: 'ready', v, panel: 'head' });
  const before = posts(page).length; // the state
  for (let step = 10; step <= 300; step += 10) {
    panels.addLiveSnapshot(at(step), true);
  }
  const burst = posts(page).slice(before);
  assert.deepEqual(
    burst.map((m) => [m.type, m.items?.map((s) => s.source.step) ?? m.source?.step]),
    [
      ['snapshots', [10]],
      ['attention', 10],
    ],
    'the first update at once',
  );
  t.mock.timers.tick(LIVE_POST_MS);
  const later = posts(page).slice(before + 2);
  assert.equal(later.length, 2, `one more post of each: ${later.map((m) => m.type)}`);
  assert.deepEqual(
    later[0].items?.map((s) => s.source.step),
    Array.from({ length: 29 }, (_, i) => 20 + 10 * i),
    'every snapshot since the first, in order',
  );
  assert.equal(later[1].source?.step, 300, 'the newest attention only');
  assert.equal(panels.store.snapshots.length, 30, 'the store holds all 30 at once');
  t.mock.timers.tick(10 * LIVE_POST_MS);
  assert.equal(posts(page).length, before + 4, 'nothing more');
  assert.equal(head.isDisposed, false);
  panels.dispose();
});

test('an attention shown outright drops the live one waiting; a full state drops every waiting post', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const panels = new Panels({ fsPath: '/ext', path: '/ext', scheme: 'file' } as never, () => undefined);
  panels.openAttention();
  const page = created[created.length - 1];
  page.fromWebview({ type: 'ready', v, panel: 'attention' });
  const before = posts(page).length;
  panels.addLiveSnapshot(at(10), true); // posted at once
  panels.addLiveSnapshot(at(20), true); // waits
  panels.showAttention(at(5)); // a decode: shown now, and the waiting live one must not cover it
  t.mock.timers.tick(LIVE_POST_MS);
  assert.deepEqual(
    posts(page)
      .slice(before)
      .map((m) => m.source?.step),
    [10, 5],
  );
  t.mock.timers.tick(LIVE_POST_MS);
  panels.addLiveSnapshot(at(30), true); // posted at once
  panels.addLiveSnapshot(at(40), true); // waits
  panels.refresh(); // the state carries step 40 already
  t.mock.timers.tick(LIVE_POST_MS);
  const last = posts(page).slice(before + 2);
  assert.deepEqual(
    last.map((m) => m.type),
    ['attention', 'state'],
    'the waiting step 40 is not posted after the state',
  );
  assert.equal(last[0].source?.step, 30);
  panels.dispose();
});
