// Runs the golden test (test/engine/golden.test.ts: every attention weight and output against
// PyTorch's) with the wasm-threads prototype enabled, without touching backend/index.ts: the test
// is bundled to out/bench/ with bench/lib/threads-inject.ts injected ahead of it, which does what
// the proposed hook in loadWasm does.
//   ATTENTION_DEBUGGER_WASM_THREADS=2 node bench/golden-threads.mjs
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import process from 'node:process';
import { root } from './lib/build.mjs';
import { nodeBundle } from '../scripts/esbuild-options.mjs';

const outfile = join(root, 'out', 'bench', 'golden-threads.test.js');
await esbuild.build({ ...nodeBundle, entryPoints: [join(root, 'test', 'engine', 'golden.test.ts')], inject: [join(root, 'bench', 'lib', 'threads-inject.ts')], outfile });
const r = spawnSync(process.execPath, ['--test', outfile], { stdio: 'inherit' });
process.exit(r.status ?? 1);
