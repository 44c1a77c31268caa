// Issue 32 items 1 and 2 as drawn: the attention view's value-weighted toggle (the norms drawn in
// place of the weights, the caption and the colour scale's range, the request id, exports named so,
// the toggle saved) and the head inspector's score decomposition (a click on a row asks for it, the
// posted reply's rows, each split summing to the score), in the dark and the light theme.
import { join } from 'node:path';
import { V, VIRIDIS, artifacts, assert, headState, hexRgb, openPanel, posted, send, test } from './harness.mjs';

// Weights and norms on the 1/8 grid (norms over their largest, 2), so each cell is a published viridis stop.
const W = [
  [1, 0, 0, 0],
  [0.5, 0.5, 0, 0],
  [0.25, 0.25, 0.25, 0.25],
  [0.125, 0.375, 0.5, 0],
];
const N = [
  [0, 0.25, 0.5, 2],
  [0, 0, 2, 0.75],
  [1, 0.5, 0, 0],
  [2, 0, 0.25, 0.75],
];
const SOURCE = { runDir: '/runs/test', step: 7, input: 'probe' };

/** An attention of one encoder head, with its norms when `norms`. */
const attentionOf = (norms) => ({
  source: SOURCE,
  srcTokens: ['a', 'b', 'c', 'd'],
  tgtTokens: ['w', 'x'],
  maps: [
    {
      kind: 'encoder_self',
      shape: [1, 1, 4, 4],
      weights: W.flat(),
      ...(norms ? { valueWeighted: N.flat() } : {}),
    },
  ],
});

/** Posts a message whose attention's arrays are made Float32Arrays in the page. */
const postWithArrays = (page, msg, at) =>
  page.evaluate(
    ({ msg, at }) => {
      const f32 = (a) => ({
        ...a,
        maps: a.maps.map((m) => ({
          ...m,
          weights: new Float32Array(m.weights),
          ...(m.valueWeighted ? { valueWeighted: new Float32Array(m.valueWeighted) } : {}),
        })),
      });
      const out = JSON.parse(JSON.stringify(msg));
      let o = out;
      for (const k of at.slice(0, -1)) o = o[k];
      o[at[at.length - 1]] = f32(o[at[at.length - 1]]);
      window.postMessage(out, '*');
    },
    { msg, at },
  );

/** The colour of each cell of the one thumbnail. */
const cells = (page) =>
  page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const cell = c.width / 4;
    const at = (x, y) => Array.from(d.data.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3));
    return [0, 1, 2, 3].map((r) =>
      [0, 1, 2, 3].map((k) => at(Math.floor((k + 0.5) * cell), Math.floor((r + 0.5) * cell))),
    );
  });

function assertColours(got, values, top, what) {
  for (let r = 0; r < 4; r++)
    for (let k = 0; k < 4; k++) {
      const want = hexRgb(VIRIDIS[values[r][k] / top]);
      const off = Math.max(...want.map((v, i) => Math.abs(v - got[r][k][i])));
      assert(
        off <= 3,
        `${what}: cell ${r},${k} (${values[r][k]}) is rgb(${got[r][k]}), want ${VIRIDIS[values[r][k] / top]}`,
      );
    }
}

const waitDrawn = (page, vw) =>
  page.waitForFunction(
    (vw) => document.body.dataset.renderDone && document.body.dataset.valueWeighted === vw,
    String(vw),
  );

for (const theme of ['dark', 'light']) {
  test(`the value-weighted toggle draws ‖α·vW^O‖ instead of the weights, says so, and exports it (${theme})`, async () => {
    const page = await openPanel('attention', { width: 1400, height: 1000 }, theme);
    const state = { panel: 'attention', header: null, attention: attentionOf(true), selected: null, roles: [] };
    await postWithArrays(page, { type: 'state', v: V, state: { ...state, valueWeighted: false } }, [
      'state',
      'attention',
    ]);
    await waitDrawn(page, false);
    assertColours(await cells(page), W, 1, 'weights');
    const off = await page.locator('#measure').textContent();
    assert(off.startsWith('weights α') && off.includes("each map's largest"), `caption with the toggle off: ${off}`);

    // On: the norms are drawn, each map from 0 to its own largest (per map); the panel is told, with an id.
    await page.locator('#value-weighted').check();
    await waitDrawn(page, true);
    assertColours(await cells(page), N, 2, 'norms');
    const asks = await posted(page, 'showValueWeighted');
    assert(asks.length === 1 && asks[0].on === true && Number.isInteger(asks[0].id), `asks: ${JSON.stringify(asks)}`);
    const on = await page.locator('#measure').textContent();
    assert(on.startsWith('value-weighted ‖α·vW^O‖') && on.includes('(per map)'), `caption with the toggle on: ${on}`);
    const saved = await page.evaluate(() => window.__state);
    assert(saved?.valueWeighted === true, `saved state: ${JSON.stringify(saved)}`);

    // One scale for the view: 0 to the largest norm, 2.
    await page.locator('#absolute').check();
    await page.waitForFunction(() => document.getElementById('measure').textContent.includes('per view'));
    const view = await page.locator('#measure').textContent();
    assert(view.includes('colour 0 to 2.00'), `caption with one scale: ${view}`);

    // The head opened large says what it draws, and its CSV and JSON hold the norms, named so.
    await page.locator('canvas.thumb[data-kind="encoder_self"]').click();
    await page.waitForFunction(() => document.getElementById('detail-title').textContent.includes('‖α·vW^O‖'));
    await page.locator('.detail-card button', { hasText: 'CSV' }).click();
    await page.locator('.detail-card button', { hasText: 'JSON' }).click();
    await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'export').length >= 2);
    const [csv, json] = await posted(page, 'export');
    assert(csv.name === 'encoder_self-0.0-step7-value-weighted.csv', `CSV named ${csv.name}`);
    assert(csv.text.includes('# values: value_weighted') && csv.text.includes('a,0,0.25,0.5,2'), `CSV: ${csv.text}`);
    const j = JSON.parse(json.text);
    assert(
      json.name.endsWith('-value-weighted.json') && j.value_weighted[3][0] === 2 && !j.weights,
      `JSON: ${json.text}`,
    );
    const headView = await page.evaluate(() => document.querySelector('#head-view')?.textContent ?? '');
    assert(headView.includes('‖α·vW^O‖'), `the head view's caption: ${headView.slice(0, 200)}`);
    await page.screenshot({ path: join(artifacts, `value-weighted-${theme}.png`), fullPage: true });

    // Off again: the weights come back, and the panel is told.
    await page.locator('#value-weighted').uncheck();
    await waitDrawn(page, false);
    await page.locator('#absolute').uncheck();
    await page.waitForFunction(() => !document.getElementById('measure').textContent.includes('0 to 1 ('));
    assertColours(await cells(page), W, 1, 'weights again');
    const last = (await posted(page, 'showValueWeighted')).at(-1);
    assert(last.on === false, `the last ask: ${JSON.stringify(last)}`);
    await page.close();
  });
}

test('an attention without norms is asked for once, with an id, and drawn when the answer comes', async () => {
  const page = await openPanel('attention', { width: 1400, height: 900 });
  const state = { panel: 'attention', header: null, attention: attentionOf(false), selected: null, roles: [] };
  await postWithArrays(page, { type: 'state', v: V, state: { ...state, valueWeighted: true } }, ['state', 'attention']);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'showValueWeighted'));
  await waitDrawn(page, false);
  const asking = await page.locator('#measure').textContent();
  assert(asking.includes('asking the engine') && asking.includes('weights α'), `caption while asking: ${asking}`);
  const [ask] = await posted(page, 'showValueWeighted');
  // An answer to another id is not this one's.
  await postWithArrays(page, { type: 'valueWeighted', v: V, id: ask.id + 1, attention: attentionOf(true) }, [
    'attention',
  ]);
  await postWithArrays(page, { type: 'valueWeighted', v: V, id: ask.id, attention: attentionOf(true) }, ['attention']);
  await waitDrawn(page, true);
  assertColours(await cells(page), N, 2, 'norms answered');
  assert((await posted(page, 'showValueWeighted')).length === 1, 'asked once');
  // An engine's refusal is said in the caption, the weights drawn.
  await postWithArrays(
    page,
    {
      type: 'state',
      v: V,
      state: { ...state, attention: { ...attentionOf(false), source: { ...SOURCE, step: 9 } }, valueWeighted: true },
    },
    ['state', 'attention'],
  );
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'showValueWeighted').length === 2);
  const second = (await posted(page, 'showValueWeighted'))[1];
  await send(page, { type: 'valueWeighted', v: V, id: second.id, error: 'no checkpoint at step 9' });
  await page.waitForFunction(() => document.getElementById('measure').textContent.includes('no checkpoint at step 9'));
  await page.close();
});

/** A hand-made heads/scores reply of 4 keys and d_k 2 whose splits each sum to the score. */
function scoresReply({ kind, embedding }) {
  const dims = [
    [0.5, -0.25],
    [1.5, 0.75],
    [-0.125, 0.25],
    [0.0625, 2],
  ];
  const scores = dims.map(([a, b]) => a + b);
  const qbk = [0.1, -0.2, 0.05, 0];
  const qkb = [0.03, 0.03, 0.03, 0.03];
  const bb = 0.01;
  const input = scores.map((s, j) => s - qbk[j] - qkb[j] - bb);
  const exp = scores.map(Math.exp);
  const z = exp.reduce((a, b) => a + b, 0);
  const top = dims.map((d) =>
    d.map((value, dim) => ({ dim, value })).sort((a, b) => Math.abs(b.value) - Math.abs(a.value)),
  );
  return {
    kind,
    layer: 0,
    head: 1,
    step: 300,
    query: 2,
    queryToken: 'c',
    keyTokens: ['a', 'b', 'c', 'd'],
    tgtTokens: ['<s>', 'w'],
    dk: 2,
    scores,
    masked: [false, false, false, false],
    weights: exp.map((e) => e / z),
    bias: { input, queryBiasKey: qbk, queryKeyBias: qkb, biasBias: bb },
    ...(embedding
      ? {
          embedding: {
            tokenToken: input.map((x) => x / 2),
            tokenPosition: input.map((x) => x / 4),
            positionToken: input.map((x) => x / 8),
            positionPosition: input.map((x) => x / 8),
          },
        }
      : { embeddingNote: 'cross-attention reads the encoder output, not the embeddings' }),
    dimensions: dims,
    topDimensions: top,
  };
}

for (const theme of ['dark', 'light']) {
  test(`a click on a row of the head inspector's map splits its scores: rows, terms, sums equal to the score (${theme})`, async () => {
    const page = await openPanel('head', { width: 1400, height: 1200 }, theme);
    const head = { kind: 'encoder_self', layer: 0, head: 1 };
    const attention = {
      source: SOURCE,
      srcTokens: ['a', 'b', 'c', 'd'],
      tgtTokens: ['<s>', 'w'],
      maps: [{ kind: 'encoder_self', shape: [1, 2, 4, 4], weights: [...W.flat(), ...W.flat()] }],
    };
    const header = {
      runDir: '/runs/test',
      run: 'test',
      step: null,
      input: 'probe',
      live: false,
      checkpoints: [300],
      vocab: true,
    };
    await headState(page, { panel: 'head', header, head, attention, snapshots: [], losses: [], cursor: null });
    await page.waitForFunction(() => document.body.dataset.drawnStep === '7');
    // Row 2 of 4: a click at five-eighths of the map's height.
    const box = await page.locator('#head-map').boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + (box.height * 5) / 8);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'requestScores'));
    const [ask] = await posted(page, 'requestScores');
    assert(
      ask.query === 2 && ask.kind === 'encoder_self' && ask.layer === 0 && ask.head === 1 && Number.isInteger(ask.id),
      `requestScores: ${JSON.stringify(ask)}`,
    );
    await send(page, {
      type: 'headScores',
      v: V,
      id: ask.id,
      scores: scoresReply({ kind: 'encoder_self', embedding: true }),
    });
    await page.waitForFunction(() => document.querySelectorAll('#score-table tr[data-key]').length === 4);
    const table = await page.evaluate(() => ({
      heads: [...document.querySelectorAll('#score-table th')].map((t) => t.textContent),
      rows: [...document.querySelectorAll('#score-table tr[data-key]')].map((tr) => ({
        score: Number(tr.dataset.score),
        sums: [...tr.querySelectorAll('td[data-sum]')].map((td) => [td.dataset.sum, Number(td.dataset.value)]),
        text: tr.textContent,
      })),
      caption: document.getElementById('score-caption').textContent,
      bar: getComputedStyle(document.querySelector('#score-table .score-bar')).backgroundColor,
    }));
    for (const name of ['tok·tok', 'tok·pos', 'pos·tok', 'pos·pos', 'x·x', 'b^Q·k', 'top d_k dimensions'])
      assert(table.heads.includes(name), `column ${name} in ${table.heads}`);
    for (const [j, r] of table.rows.entries()) {
      assert(r.sums.length === 3, `row ${j} has sums ${JSON.stringify(r.sums)}`);
      for (const [name, v] of r.sums)
        assert(Math.abs(v - r.score) < 1e-9, `row ${j}: ${name} = ${v}, score ${r.score}`);
    }
    assert(
      table.rows[3].text.startsWith('d ‹3›2.0625') && table.rows[3].text.includes('d1 +2.000'),
      `row 3: ${table.rows[3].text}`,
    );
    for (const part of ['run test', 'step 300', 'input probe', 'head encoder_self:0.1', 'query 2 “c”'])
      assert(table.caption.includes(part), `caption ${table.caption} lacks ${part}`);
    assert(table.bar !== 'rgba(0, 0, 0, 0)', `the bar is coloured: ${table.bar}`);
    // Every cell reads whole (the table scrolls sideways rather than cutting the top dimensions).
    const cut = await page.evaluate(() =>
      [...document.querySelectorAll('#score-table th, #score-table td')]
        .filter((c) => c.scrollWidth > c.clientWidth + 1)
        .map((c) => c.textContent),
    );
    assert(cut.length === 0, `cells cut: ${JSON.stringify(cut)}`);
    await page.locator('#scores').screenshot({ path: join(artifacts, `head-scores-${theme}.png`) });

    // Another head's row, without the embedding split: the engine's note says why, and no Σ emb.
    await page.locator('#score-query').fill('1');
    await page.locator('#score-ask').click();
    await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'requestScores').length === 2);
    const second = (await posted(page, 'requestScores'))[1];
    assert(second.query === 1 && second.id !== ask.id, `second ask: ${JSON.stringify(second)}`);
    await send(page, {
      type: 'headScores',
      v: V,
      id: second.id,
      scores: { ...scoresReply({ kind: 'encoder_self', embedding: false }), query: 1 },
    });
    await page.waitForFunction(() =>
      document.getElementById('score-note').textContent.includes('cross-attention reads'),
    );
    const cols = await page.evaluate(() => [...document.querySelectorAll('#score-table th')].map((t) => t.textContent));
    assert(!cols.includes('tok·tok') && !cols.includes('Σ emb') && cols.includes('Σ d_k'), `columns: ${cols}`);
    await page.close();
  });
}

test('the head inspector follows the value-weighted toggle: its map draws the norms, its title says so', async () => {
  const page = await openPanel('head', { width: 1400, height: 1000 });
  const head = { kind: 'encoder_self', layer: 0, head: 0 };
  const state = { panel: 'head', header: null, head, snapshots: [], losses: [], cursor: null, valueWeighted: true };
  await page.evaluate(
    ({ state, a, v }) => {
      const m = a.maps[0];
      const attention = {
        ...a,
        maps: [{ ...m, weights: new Float32Array(m.weights), valueWeighted: new Float32Array(m.valueWeighted) }],
      };
      window.postMessage({ type: 'state', v, state: { ...state, attention } }, '*');
    },
    { state, a: attentionOf(true), v: V },
  );
  await page.waitForFunction(() => document.getElementById('map-title').textContent.includes('‖α·vW^O‖'));
  const px = await page.evaluate(() => {
    const c = document.getElementById('head-map');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const at = (r, k) => {
      const x = Math.floor(((k + 0.5) * c.width) / 4);
      const y = Math.floor(((r + 0.5) * c.height) / 4);
      return Array.from(d.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3));
    };
    return [0, 1, 2, 3].map((r) => [0, 1, 2, 3].map((k) => at(r, k)));
  });
  assertColours(px, N, 2, 'the inspector’s norms');
  const bar = await page.locator('#colorbar-max').textContent();
  assert(bar === '2.00', `the colour bar's top: ${bar}`);
  await page.close();
});
