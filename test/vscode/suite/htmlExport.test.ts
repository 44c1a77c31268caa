/**
 * A panel's HTML export in a real VS Code (issue 33 item 2): Export View… as html on the attention
 * view of a finished micro run writes one self-contained file (a CSP that loads nothing, no script)
 * that holds what the panel shows: the run's name, its step and input in the header, and one image
 * per attention map the panel drew (its thumbnails); the message says where, with Open.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-html-export-'));
const run = path.join(tmp, 'runs', 'reverse-html');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('HTML export: Export View… writes the attention view as one file with its run, step and every map drawn', async () => {
  const api = await activateExtension();
  await trainAndWait(api, run, 'reverse', microConfig(tmp, 10, 10));
  await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: run, text: '4 5 6 7' });
  api.panels.openAttention();
  await until('the attention page', () => api.panels.slots.attention.current?.isReady === true, 60_000);
  let drawn = await drawnIn(api.panels.slots, 'attention');
  for (let i = 0; i < 50 && (drawn.maps.length === 0 || drawn.run !== 'reverse-html'); i++)
    drawn = await drawnIn(api.panels.slots, 'attention');
  const maps = drawn.maps.reduce((n, m) => n + m.shape[0]! * m.shape[1]!, 0);
  assert.ok(maps > 0, `the attention view drew maps of ${drawn.run}`);
  const out = path.join(tmp, 'attention.html');
  const ui = answer(() => undefined);
  let written: string | undefined;
  try {
    written = await vscode.commands.executeCommand<string | undefined>('attentionDebugger.exportView', {
      panel: 'attention',
      format: 'html',
      path: out,
    });
  } finally {
    ui.restore();
  }
  assert.equal(written, out);
  const told = ui.asked.find((a) => a.fn === 'showInformationMessage');
  assert.ok(told && told.text.includes(out) && told.items.includes('Open'), `says where, with Open: ${told?.text}`);
  const html = fs.readFileSync(out, 'utf8');
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
  assert.ok(!/<script/i.test(html), 'no script');
  const header = /<div id="view-header"[^>]*>([^]*?)<\/div>/.exec(html);
  assert.ok(header, 'the panel’s header');
  const headerText = header[1]!.replace(/<[^>]+>/g, '');
  assert.ok(header[0].includes('data-run="reverse-html"') && headerText.includes('reverse-html'), headerText);
  const step = drawn.step === null ? 'newest step' : `step ${drawn.step}`;
  assert.ok(headerText.includes(step) && headerText.includes('4 5 6 7'), `${headerText} says ${step} and the input`);
  const thumbs = html.match(/<img [^>]*class="thumb[ "][^>]*src="data:image\/png;base64,/g) ?? [];
  assert.equal(thumbs.length, maps, `one image per map drawn (${maps})`);
}, 240_000);
