/* global WebAssembly -- the init script runs in the page */
// Issue 34: a map larger than its thumbnail is max-pooled by poolMax.wat on WebAssembly SIMD, under
// the panels' own Content Security Policy (src/extension/panels/html.ts allows 'wasm-unsafe-eval'
// and nothing more). Were the module refused, the page would still draw, in the scalar loop about
// three times slower: so the test counts the module's instances and the policy's refusals, and
// reads the pooled pixels against values worked by hand.
import { VIRIDIS, assert, hexRgb, openPanel, test } from './harness.mjs';

const COUNT_WASM = () => {
  window.__wasm = { instances: 0, refused: [] };
  const Instance = WebAssembly.Instance;
  WebAssembly.Instance = function (...args) {
    const made = new Instance(...args);
    window.__wasm.instances++;
    return made;
  };
  document.addEventListener('securitypolicyviolation', (e) =>
    window.__wasm.refused.push(`${e.violatedDirective} ${e.blockedURI}`),
  );
};

test('a 192-token map pools into its 96-pixel thumbnail on WebAssembly under the panel CSP', async () => {
  const page = await openPanel('attention', undefined, 'dark', COUNT_WASM);
  // 192 × 192 → 96 × 96: 2 × 2 blocks. One weight 1 at query 101, key 50 (block 50, 25), 1/2 at
  // query 0, key 191 (block 0, 95), 0 elsewhere: the thumbnail's pixel (25, 50) is viridis(1), its
  // pixel (95, 0) viridis(0.5) and every other one viridis(0), the colour scale topping at 1.
  await page.evaluate(() => {
    const n = 192;
    const w = new Float32Array(n * n);
    w[101 * n + 50] = 1;
    w[0 * n + 191] = 0.5;
    const tok = (p) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    window.postMessage(
      {
        type: 'attention',
        v: 3,
        source: { runDir: '/runs/test', step: 5, input: 'probe' },
        srcTokens: tok('s'),
        tgtTokens: tok('t'),
        maps: [{ kind: 'encoder_self', shape: [1, 1, n, n], weights: w }],
      },
      '*',
    );
  });
  await page.waitForFunction(() => document.querySelector('canvas.thumb[data-drawn="1"]'));
  const got = await page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"][data-layer="0"][data-head="0"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const at = (x, y) => Array.from(d.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3));
    return { size: [c.width, c.height], peak: at(25, 50), half: at(95, 0), rest: [at(24, 50), at(25, 51), at(0, 0)] };
  });
  const wasm = await page.evaluate(() => window.__wasm);
  assert(wasm.refused.length === 0, `the page's CSP refused: ${wasm.refused.join('; ')}`);
  assert(wasm.instances === 1, `poolMax.wat was instantiated ${wasm.instances} times, want once`);
  assert(got.size.join('×') === '96×96', `thumbnail ${got.size.join('×')}`);
  const near = (rgb, hex) => hexRgb(hex).every((v, i) => Math.abs(v - rgb[i]) <= 3);
  assert(near(got.peak, VIRIDIS[1]), `pixel (25, 50) is rgb(${got.peak}), want ${VIRIDIS[1]}`);
  assert(near(got.half, VIRIDIS[0.5]), `pixel (95, 0) is rgb(${got.half}), want ${VIRIDIS[0.5]}`);
  for (const rgb of got.rest)
    assert(near(rgb, VIRIDIS[0]), `a pixel away from both is rgb(${rgb}), want ${VIRIDIS[0]}`);
  await page.close();
});
