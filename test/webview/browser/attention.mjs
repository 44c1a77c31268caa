// The attention view: known maps drawn in viridis, clicks, 512-token messages, malformed messages.
import { join } from 'node:path';
import { V, VIRIDIS, hexRgb, openPanel, posted, send, assert, POST_ATTENTION, artifacts, test } from './harness.mjs';
// Issue 34's tests: the counts of a live snapshot, and the pooling on WebAssembly.
import './drawCounts.mjs';
import './simdPool.mjs';

test('a known 4×4 attention matrix is drawn with viridis colours in the right cells', async () => {
  const page = await openPanel('attention');
  // Rows are queries, columns keys; values on the 1/8 grid so each cell is a published viridis stop.
  const M = [
    [1, 0, 0, 0],
    [0.5, 0.5, 0, 0],
    [0.25, 0.25, 0.25, 0.25],
    [0.125, 0.375, 0.5, 0],
  ];
  await page.evaluate((m) => {
    window.postMessage(
      {
        type: 'attention',
        v: 3,
        source: { runDir: '/runs/test', step: 7, input: 'probe' },
        srcTokens: ['a', 'b', 'c', 'd'],
        tgtTokens: ['w', 'x'],
        maps: [{ kind: 'encoder_self', shape: [1, 1, 4, 4], weights: new Float32Array(m.flat()) }],
      },
      '*',
    );
  }, M);
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const px = await page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"][data-layer="0"][data-head="0"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const at = (x, y) => Array.from(d.data.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 4));
    const cell = c.width / 4;
    return {
      w: c.width,
      h: c.height,
      cells: [0, 1, 2, 3].map((r) =>
        [0, 1, 2, 3].map((k) => at(Math.floor(k * cell + cell / 2), Math.floor(r * cell + cell / 2))),
      ),
      edge: at(Math.floor(cell) - 1, 0),
    };
  });
  assert(px.w === 96 && px.h === 96, `thumbnail is ${px.w}×${px.h}, want 96×96`);
  for (let r = 0; r < 4; r++) {
    for (let k = 0; k < 4; k++) {
      const want = hexRgb(VIRIDIS[M[r][k]]);
      const got = px.cells[r][k];
      const off = Math.max(...want.map((v, i) => Math.abs(v - got[i])));
      assert(
        off <= 3 && got[3] === 255,
        `cell query ${r} key ${k} (w=${M[r][k]}): got rgba(${got}), want ${VIRIDIS[M[r][k]]}`,
      );
    }
  }
  // The last pixel of cell (0,0) still belongs to it: cells are exact 24-pixel blocks.
  assert(
    hexRgb(VIRIDIS[1]).every((v, i) => Math.abs(v - px.edge[i]) <= 3),
    `cell (0,0) edge pixel is rgba(${px.edge})`,
  );
  await page.screenshot({ path: join(artifacts, 'attention-4x4.png') });
  await page.close();
});

test('clicking a thumbnail posts openHead with its layer and head and opens it large', async () => {
  const page = await openPanel('attention');
  await page.evaluate(POST_ATTENTION, {
    S: 7,
    T: 6,
    L: 2,
    H: 3,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.05,
    step: 100,
  });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const n = await page.locator('canvas.thumb').count();
  assert(n === 18, `want 2 layers × 3 heads × 3 kinds = 18 thumbnails, got ${n}`);
  await page.click('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="2"]');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'openHead'));
  const open = await posted(page, 'openHead');
  assert(open.length === 1, `posted ${open.length} openHead messages`);
  const o = open[0];
  assert(o.kind === 'cross' && o.layer === 1 && o.head === 2 && o.v === V, `openHead was ${JSON.stringify(o)}`);
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  const detail = await page.evaluate(() => {
    const d = document.getElementById('detail').data[0];
    return {
      rows: d.z.length,
      cols: d.z[0].length,
      x: d.x,
      y: d.y,
      sel: document.querySelectorAll('canvas.thumb.selected').length,
      state: window.__state,
    };
  });
  // cross attention: target (6) queries × source (7) keys, axes labelled with the tokens.
  assert(detail.rows === 6 && detail.cols === 7, `detail heatmap is ${detail.rows}×${detail.cols}, want 6×7`);
  assert(detail.x[3].startsWith('s3') && detail.y[5].startsWith('t5'), `axis labels ${detail.x[3]}, ${detail.y[5]}`);
  assert(detail.sel === 1, `${detail.sel} thumbnails marked selected`);
  assert(
    detail.state?.head?.layer === 1 && detail.state.head.head === 2,
    `setState got ${JSON.stringify(detail.state)}`,
  );
  // Hovering the heatmap shows a value (plotly's hover layer).
  const box = await page.locator('#detail .nsewdrag').first().boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForSelector('#detail .hoverlayer .hovertext', { timeout: 5000 });
  const hover = await page.evaluate(() => document.querySelector('#detail .hoverlayer .hovertext').textContent);
  assert(/weight 0\.\d{4}/.test(hover), `hover text: ${hover}`);
  // The head's CSV and JSON buttons write the one export format (protocol/export.ts, whose own test
  // pins it): what the view shows in # lines or fields, then key tokens across, query tokens down.
  await page.click('.detail-card button:has-text("CSV")');
  await page.click('.detail-card button:has-text("JSON")');
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'export').length >= 2);
  const exports = await posted(page, 'export');
  const [csv, json] = ['csv', 'json'].map((f) => exports.find((m) => m.format === f));
  const lines = csv.text.split('\n');
  assert(
    lines.slice(0, 8).join('|') ===
      '# run: /runs/test|# step: 100|# input: probe|# head_id: cross:1.2|# kind: cross|# layer: 1|# head: 2|' +
        'query\\key,s0,s1,s2,s3,s4,s5,s6',
    `CSV head: ${lines.slice(0, 8).join(' | ')}`,
  );
  assert(lines.length === 8 + 6 + 1 && lines[8].startsWith('t0,'), `CSV rows: ${lines.length}`);
  const j = JSON.parse(json.text);
  assert(
    j.run === '/runs/test' && j.step === 100 && j.head_id === 'cross:1.2' && j.layer === 1 && j.head === 2,
    `JSON fields ${JSON.stringify({ ...j, weights: undefined })}`,
  );
  assert(
    j.query_tokens.length === 6 && j.key_tokens[6] === 's6' && j.weights.length === 6 && j.weights[0].length === 7,
    'JSON weights [query][key]',
  );
  await page.screenshot({ path: join(artifacts, 'attention-grid.png'), fullPage: true });
  await page.close();
});

test('a 512-token message draws all 144 thumbnails without hanging the page', async () => {
  const page = await openPanel('attention');
  // A heartbeat in the page: a timer task that notes the time and how much is drawn, then queues
  // itself again. Drawing in one long task would leave a gap as long as the drawing between beats.
  await page.evaluate(() => {
    window.__beats = [];
    const beat = () => {
      window.__beats.push({ t: window.performance.now(), drawn: Number(document.body.dataset.thumbsDrawn ?? 0) });
      if (!document.body.dataset.renderDone) setTimeout(beat, 0);
    };
    window.__startBeats = () => setTimeout(beat, 0);
  });
  const t0 = Date.now();
  await page.evaluate(POST_ATTENTION, {
    S: 512,
    T: 512,
    L: 6,
    H: 8,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.02,
    step: 5000,
  });
  await page.evaluate(() => window.__startBeats());
  // While drawing, the page must keep answering: poll it; each poll is a task between slices.
  let polls = 0;
  let midway = 0;
  let slowest = 0;
  for (;;) {
    const asked = Date.now();
    const s = await page.evaluate(() => ({
      drawn: Number(document.body.dataset.thumbsDrawn ?? 0),
      done: !!document.body.dataset.renderDone,
    }));
    polls++;
    if (s.done) break;
    if (s.drawn > 0) {
      midway++;
      slowest = Math.max(slowest, Date.now() - asked);
    }
    if (Date.now() - t0 > 180000) throw new Error(`only ${s.drawn} of 144 thumbnails after 180 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = Date.now() - t0;
  const drawn = await page.evaluate(() => document.querySelectorAll('canvas.thumb[data-drawn="1"]').length);
  assert(drawn === 144, `${drawn} of 144 thumbnails drawn`);
  // A thumbnail really holds the map: its diagonal band is bright, its far corner dark.
  const corners = await page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"][data-layer="0"][data-head="2"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const lum = (x, y) => d[(y * c.width + x) * 4] + d[(y * c.width + x) * 4 + 1] + d[(y * c.width + x) * 4 + 2];
    const m = Math.floor(c.width / 2);
    return { diag: lum(m, m), corner: lum(c.width - 1, 0), w: c.width };
  });
  assert(
    corners.w >= 40 && corners.w <= 96 && corners.diag > corners.corner + 200,
    `thumbnail not drawn from the map: ${JSON.stringify(corners)}`,
  );
  // The heartbeats that ran with some but not all thumbnails drawn, and the longest the page went
  // without one from the first of them to the beat after the last (that one saw the drawing done).
  const beats = await page.evaluate(() => window.__beats);
  const first = beats.findIndex((b) => b.drawn > 0 && b.drawn < 144);
  const last = beats.findLastIndex((b) => b.drawn > 0 && b.drawn < 144);
  let gap = 0;
  for (let i = first + 1; first >= 0 && i <= Math.min(last + 1, beats.length - 1); i++)
    gap = Math.max(gap, beats[i].t - beats[i - 1].t);
  const mid = first >= 0 ? last - first + 1 : 0;
  const span = first >= 0 ? Math.round(beats[Math.min(last + 1, beats.length - 1)].t - beats[first].t) : 0;
  console.log(
    `    512 tokens, 3 kinds × 6 layers × 8 heads: posted and drawn in ${ms} ms; page answered ${midway} polls ` +
      `mid-drawing (${polls} in all, slowest ${slowest} ms); ${mid} heartbeats in ${span} ms of drawing, ` +
      `longest gap ${Math.round(gap)} ms`,
  );
  // Drawing is sliced (~12 ms a slice), so timer tasks and polls run between slices; drawing the 144
  // in one task leaves no beat and no poll mid-drawing. The bounds are generous for a loaded 2-core
  // machine: a slice is one budget plus one 512 × 512 thumbnail, tens of ms.
  assert(mid >= 5, `only ${mid} heartbeats ran while the thumbnails were being drawn`);
  assert(gap <= 500, `the page ran no task for ${Math.round(gap)} ms while drawing`);
  assert(midway >= 2, `the page answered only ${midway} polls while drawing`);
  assert(slowest <= 1000, `a poll waited ${slowest} ms for the page while drawing`);
  await page.screenshot({ path: join(artifacts, 'attention-512.png') });
  // Opening a 512 × 512 head large: plotly gets a max-pooled 256 × 256 map, not 262,144 cells.
  const t1 = Date.now();
  await page.click('canvas.thumb[data-kind="cross"][data-layer="5"][data-head="7"]');
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.z?.length === 256, null, {
    timeout: 60000,
  });
  const z = await page.evaluate(() => {
    const d = document.getElementById('detail').data[0];
    return { rows: d.z.length, cols: d.z[0].length, title: document.getElementById('detail-title').textContent };
  });
  assert(z.cols === 256 && z.title.includes('max-pooled'), `large view ${z.rows}×${z.cols}, “${z.title}”`);
  console.log(`    opened a 512 × 512 head large in ${Date.now() - t1} ms`);
  await page.close();
});

test('a malformed message shows an error naming the field, posts error, and the panel goes on', async () => {
  const page = await openPanel('attention');
  // Weights as a JSON array instead of a Float32Array.
  await send(page, {
    type: 'attention',
    v: 3,
    source: { runDir: '/runs/test', step: 1, input: 'probe' },
    srcTokens: ['a'],
    tgtTokens: [],
    maps: [{ kind: 'encoder_self', shape: [1, 1, 1, 1], weights: [0.5] }],
  });
  await page.waitForSelector('#error:not([hidden])');
  const text = await page.locator('#error').innerText();
  assert(text.includes('attention.maps[0].weights must be a Float32Array'), `error banner: ${text}`);
  const errs = await posted(page, 'error');
  assert(errs.length === 1 && errs[0].message.includes('maps[0].weights'), `posted ${JSON.stringify(errs)}`);
  await page.screenshot({ path: join(artifacts, 'attention-error.png') });
  // Wrong protocol version, wrong shape, unknown type: each named.
  const cases = [
    [{ type: 'attention', v: 99 }, `attention.v must be protocol version ${V}`],
    // Another panel's message (the dashboard's) is refused by this page, named.
    [{ type: 'metrics', v: V, rows: [] }, 'got "metrics"'],
    [
      {
        type: 'attention',
        v: 3,
        source: { runDir: '/runs/test', step: 1, input: 'probe' },
        srcTokens: ['a', 'b'],
        tgtTokens: [],
        maps: [{ kind: 'encoder_self', shape: [1, 1, 3, 2], weights: 'x' }],
      },
      'weights must be a Float32Array',
    ],
    [{ type: 'frobnicate', v: 3 }, 'message.type must be one of'],
    [null, 'message must be an object'],
  ];
  for (const [m, want] of cases) {
    await send(page, m);
    await page
      .waitForFunction((w) => document.getElementById('error').textContent.includes(w), want, { timeout: 5000 })
      .catch(async () => {
        throw new Error(`want an error with “${want}”, banner says “${await page.locator('#error').innerText()}”`);
      });
  }
  const shape = {
    type: 'attention',
    v: 3,
    source: { runDir: '/runs/test', step: 1, input: 'probe' },
    srcTokens: ['a', 'b'],
    tgtTokens: [],
    maps: [{ kind: 'encoder_self', shape: [1, 1, 3, 2], weights: null }],
  };
  await page.evaluate(
    (m) => window.postMessage({ ...m, maps: [{ ...m.maps[0], weights: new Float32Array(6) }] }, '*'),
    shape,
  );
  await page.waitForFunction(() => document.getElementById('error').textContent.includes('shape[2] must be 2'));
  // A good message afterwards draws, and the banner goes away.
  await page.evaluate(POST_ATTENTION, { S: 5, T: 4, L: 1, H: 2, kinds: ['encoder_self'], fill: 0, step: 2 });
  await page.waitForFunction(() => document.body.dataset.renderDone && document.getElementById('error').hidden);
  await page.close();
});

test('switching a head off asks for its effect, marks it, and shows each token’s log-prob change and the new output', async () => {
  const page = await openPanel('attention');
  const state = (ablation) =>
    page.evaluate(
      ({ ablation, v }) => {
        const w = (q, k) => new Float32Array(2 * q * k).fill(1 / k);
        const attention = {
          source: { runDir: '/runs/rev', step: 30, input: 'input' },
          srcTokens: ['5', '6', '</s>'],
          tgtTokens: ['<s>', '6'],
          maps: [
            { kind: 'encoder_self', shape: [1, 2, 3, 3], weights: w(3, 3) },
            { kind: 'decoder_self', shape: [1, 2, 2, 2], weights: w(2, 2) },
            { kind: 'cross', shape: [1, 2, 2, 3], weights: w(2, 3) },
          ],
        };
        const header = {
          runDir: '/runs/rev',
          run: 'rev',
          step: 30,
          input: '5 6',
          live: false,
          checkpoints: [30],
          vocab: true,
        };
        const st = { panel: 'attention', header, attention, selected: null, roles: [], ablation };
        window.postMessage({ type: 'state', v, state: st }, '*');
      },
      { ablation, v: V },
    );
  await state(null);
  await page.waitForFunction(() => document.body.dataset.renderDone);
  assert(await page.evaluate(() => document.getElementById('ablation-card').hidden), 'no card while every head is on');
  await page.click('canvas.thumb[data-kind="cross"][data-layer="0"][data-head="1"]');
  await page.click('#switch-head');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ablateHeads'));
  const [asked] = await posted(page, 'ablateHeads');
  assert(
    JSON.stringify(asked.ablation) === JSON.stringify({ heads: ['cross:0.1'], mode: 'zero' }),
    `asked ${JSON.stringify(asked)}`,
  );
  const marked = await page.evaluate(() =>
    [...document.querySelectorAll('canvas.thumb.ablated')].map((c) => `${c.dataset.kind}:${c.dataset.head}`),
  );
  assert(marked.join() === 'cross:1', `marked ${marked}`);
  assert((await page.textContent('#switch-head')) === 'Switch On', 'the switch now turns it back on');

  // The extension's answer: target <s> 6, so rows predict 6 and </s>; log-probs worked here.
  const effect = {
    ablation: { heads: ['cross:0.1'], mode: 'zero' },
    runDir: '/runs/rev',
    step: 30,
    tgtTokens: ['<s>', '6'],
    intact: [-0.25, -0.5],
    ablated: [-2.25, -0.375],
    output: { text: '5 5', tokens: ['5', '5'] },
  };
  await state(effect);
  await page.waitForFunction(() => document.querySelectorAll('#ablation-table tr[data-delta]').length === 2);
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('#ablation-table tr[data-delta]')].map((r) =>
      [...r.children].map((c) => c.textContent).join('|'),
    ),
  );
  assert(rows[0] === '6|-0.250|-2.250|-2.000' && rows[1] === '</s>|-0.500|-0.375|+0.125', `rows ${rows}`);
  const out = await page.textContent('#ablation-output');
  assert(out.includes('greedy output with cross:0.1 zero-ablated: 5 5'), `output: ${out}`);
  assert(out.includes('log P of the target: -0.750 as trained, -2.625 with the heads off'), `sum: ${out}`);
  await page.screenshot({ path: join(artifacts, 'attention-ablation.png'), fullPage: true });
  await page.click('#ablated-heads button');
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'ablateHeads').length === 2);
  const again = (await posted(page, 'ablateHeads'))[1];
  assert(again.ablation.heads.length === 0, 'the chip switches the head back on');
  await page.close();
});
