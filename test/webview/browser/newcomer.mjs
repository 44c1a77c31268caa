// What a newcomer tripped on in the attention view: an empty view that waits without saying what
// to do, and a hover readout that still names the previous input's tokens.
import { POST_ATTENTION, V, assert, openPanel, send, test } from './harness.mjs';

test('an empty attention view says what to do next, not "waiting"', async () => {
  const page = await openPanel('attention');
  const state = { panel: 'attention', header: null, attention: null, selected: null, roles: [] };
  await send(page, { type: 'state', v: V, state });
  let status = await page.locator('#status').innerText();
  assert(/^No run selected: train one .*Train.* or open a run folder/.test(status), `status: ${status}`);
  assert(!/waiting/i.test(await page.locator('body').innerText()), 'nothing says "waiting"');
  // A live run before its first snapshot: when the attention comes, and what to do meanwhile.
  const header = { runDir: '/runs/r', run: 'r', step: null, input: 'probe', live: true, checkpoints: [], vocab: true };
  await send(page, { type: 'state', v: V, state: { ...state, header } });
  status = await page.locator('#status').innerText();
  assert(
    status === "r is training: its probe's attention arrives with the first snapshot; or type a sentence above.",
    status,
  );
  await page.close();
});

test('the hover readout is cleared when the input changes', async () => {
  const page = await openPanel('attention');
  const shape = { S: 5, T: 4, L: 1, H: 2, kinds: ['encoder_self'], fill: 0 };
  await page.evaluate(POST_ATTENTION, { ...shape, step: 100 });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const box = await page.locator('canvas.thumb[data-head="1"]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.9, box.y + box.height * 0.1);
  const read = await page.locator('#readout').innerText();
  // The top-right cell of a 5×5 map: query 0 "s0" → key 4 "s4".
  assert(read.startsWith('encoder_self:0.1: query 0 “s0” → key 4 “s4” = 0.'), `readout: ${read}`);
  await page.mouse.move(0, 0);
  await page.evaluate(() => delete document.body.dataset.renderDone);
  await page.evaluate(POST_ATTENTION, { ...shape, S: 3, step: 200 });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const after = await page.locator('#readout').innerText();
  assert(after === '', `after a new input the readout still says: ${after}`);
  await page.close();
});
