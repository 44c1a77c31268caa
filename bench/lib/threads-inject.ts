// Injected by bench/golden-threads.mjs ahead of a test bundle: what the one-line hook in
// backend/index.ts's loadWasm would do, ATTENTION_DEBUGGER_WASM_THREADS=N → N XNNPACK threads.
import { enableWasmThreadsFromEnv, wasmThreadsInUse } from '../../src/engine/backend/wasmThreads';

const threads = enableWasmThreadsFromEnv();
process.stderr.write(`# wasm threads requested: ${threads}\n`);
process.on('exit', () => process.stderr.write(`# wasm threads in use (XNNPACK): ${wasmThreadsInUse()}\n`));
