// Memory estimate against measured peak (issue 27 #4): for each preset, a fresh process trains
// --steps steps on wasm of one fixed batch (--rows rows of --len tokens a side, --vocab tokens;
// bench/lib/trainCase.mjs) and reports the highest byte of the wasm heap malloc handed out
// (backend/wasm/wasmHeap.ts) and the heap's size, beside the engine's estimate for the same batch
// (run/memory.ts trainingMemory). big is not trained: the check that refuses it is run and its
// message printed. Prints the markdown table of bench/README.md. Not part of npm test.
//   node bench/memory.mjs [--presets tiny,small,base] [--rows 20] [--len 32] [--vocab 8000] [--steps 3]
//        [--base-rows 10]
import console from 'node:console';
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from './lib/build.mjs';
import { makeBatch } from './lib/trainCase.mjs';
import { optimizerOf, parseArgs } from './lib/common.mjs';

const MiB = 2 ** 20;

/** One preset in this process: its estimate and measured peak, as one JSON line on stdout. */
async function measure(preset, rows, len, vocab, steps) {
  const e = await loadEngine();
  await e.initBackend('wasm');
  const watch = e.watchWasmHeap();
  const config = e.configFromPreset(preset, { src_vocab: vocab, tgt_vocab: vocab });
  const model = new e.Transformer(config, undefined, 1);
  const adam = optimizerOf(e);
  const batch = makeBatch(config, rows, len, 1);
  for (let i = 0; i < steps; i++) await e.trainStep(model, adam, batch, { lr: 1e-4, labelSmoothing: 0.1, seed: i });
  const tokens = rows * len * 2; // padded source + target tokens: batch_tokens' measure
  const estimate = e.trainingMemory(config, tokens);
  console.log(JSON.stringify({ preset, rows, len, tokens, estimate, peak: watch.highest(), heap: e.wasmHeapBytes() }));
}

async function main() {
  const args = parseArgs({ presets: 'tiny,small,base', rows: 20, len: 32, vocab: 8000, steps: 3, baseRows: 10 });
  const self = fileURLToPath(import.meta.url);
  const lines = [];
  for (const preset of args.presets.split(',')) {
    const rows = preset === 'base' ? args.baseRows : args.rows;
    const r = spawnSync(process.execPath, [self, '--one', preset, rows, args.len, args.vocab, args.steps], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`${preset}: ${r.stderr}`);
    lines.push(JSON.parse(r.stdout.trim().split('\n').pop()));
  }
  const e = await loadEngine();
  console.log(`wasm, ${args.steps} steps of one batch of rows x ${args.len} tokens a side, vocabulary ${args.vocab}\n`);
  console.log('| preset | parameters | batch tokens | estimate | measured peak | heap size | estimate / peak |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const l of lines) {
    const mib = (b) => `${(b / MiB).toFixed(1)} MiB`;
    console.log(
      `| ${l.preset} | ${(l.estimate.parameters / 1e6).toFixed(1)} M | ${l.rows} x ${l.len} x 2 = ${l.tokens} | ` +
        `${mib(l.estimate.bytes)} | ${mib(l.peak)} | ${mib(l.heap)} | ${(l.estimate.bytes / l.peak).toFixed(2)} |`,
    );
  }
  const big = e.configFromPreset('big', { src_vocab: args.vocab, tgt_vocab: args.vocab });
  try {
    e.checkTrainingMemory(big, 'preset big', { tokens: 50000 }, 'wasm');
    console.log('\nbig: not refused (unexpected)');
  } catch (err) {
    console.log(`\nbig, batch_tokens 50,000: refused up front:\n  ${err.message}`);
  }
}

if (process.argv[2] === '--one') {
  const [preset, rows, len, vocab, steps] = process.argv.slice(3);
  await measure(preset, Number(rows), Number(len), Number(vocab), Number(steps));
} else await main();
