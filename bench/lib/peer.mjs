// The PyTorch peer as one long-lived process, and the check that a ratio against it is fair.
// A peer prints {"ready": …} once torch is imported (its BLAS is mapped then), then answers each stdin
// line with one stdout line; at the end of stdin it prints its last line ({ info, rss }) and exits.
import console from 'node:console';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { root } from './build.mjs';
import { PYTHON } from './common.mjs';

/** Starts bench/<script> with the peer's Python; resolves once it says it is ready. */
export async function startPeer(script, args = []) {
  const child = spawn(PYTHON, [join(root, 'bench', script), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  const queued = [];
  lines.on('line', (line) => (waiting.length ? waiting.shift().resolve(line) : queued.push(line)));
  let exitCode;
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exitCode = code ?? signal))));
  const why = () =>
    `${PYTHON} bench/${script} exited with ${exitCode}` +
    (exitCode === 1 ? ' (is PyTorch installed? apt-get install python3-torch, or WANT_TORCH=1 npm run setup)' : '');
  exited.then(() => {
    for (const w of waiting.splice(0)) w.reject(new Error(why()));
  });
  child.on('error', (e) => {
    for (const w of waiting.splice(0)) w.reject(e);
  });
  const next = () =>
    queued.length
      ? Promise.resolve(queued.shift())
      : exitCode !== undefined
        ? Promise.reject(new Error(why()))
        : new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const peer = {
    pid: child.pid,
    ready: undefined,
    next: async () => JSON.parse(await next()),
    request: async (obj) => {
      child.stdin.write(`${JSON.stringify(obj)}\n`);
      return JSON.parse(await next());
    },
    /** Closes stdin; the peer's last line is { info, rss }. */
    finish: async () => {
      child.stdin.end();
      const last = JSON.parse(await next());
      await exited;
      if (exitCode !== 0) throw new Error(why());
      return last;
    },
    kill: () => child.kill(),
  };
  peer.ready = await peer.next();
  return peer;
}

/**
 * A GPU comparison (the peer on --device cuda, or the engine on webgpu) is printed only when the
 * engine runs on a hardware GPU adapter and the peer on a CUDA device. `rehearse` runs it anyway (a
 * software adapter, a CPU peer) to check the bench and its packing: every figure is then labelled a
 * rehearsal. Otherwise says what is missing and exits 2, before anything is timed.
 * `engine`: { backend, adapter: { software, line } | null }.
 */
export function requireFairGpu(peer, engine, { device, rehearse }) {
  const problems = [];
  if (engine.backend !== 'webgpu')
    problems.push(`the engine runs on ${engine.backend}, not webgpu: pass --backend webgpu`);
  else if (!engine.adapter || engine.adapter.software)
    problems.push(`the engine's adapter is ${engine.adapter ? `a software one (${engine.adapter.line})` : 'missing'}`);
  if (!device.startsWith('cuda')) problems.push(`the PyTorch peer runs on ${device}: pass --device cuda`);
  else if (!peer.ready.cuda)
    problems.push('the PyTorch peer finds no CUDA device (torch.cuda.is_available() is false)');
  if (problems.length === 0) return { engine: engine.adapter.line, peer: 'cuBLAS', rehearsal: false };
  if (rehearse) {
    console.log(`bench: REHEARSAL, not a measurement: ${problems.join('; ')}`);
    return { engine: engine.adapter?.line ?? 'none', peer: device, rehearsal: true };
  }
  console.error('bench: refusing a GPU comparison, one side is not on a GPU:');
  for (const p of problems) console.error(`  - ${p}`);
  console.error('  (--rehearse runs it anyway, labelled a rehearsal, to check the bench itself)');
  peer.kill();
  process.exit(2);
}

/** Which check applies: a GPU comparison (--device cuda or --backend webgpu) or the BLAS one. */
export const isGpuComparison = (backend, device) => backend === 'webgpu' || device !== 'cpu';

/**
 * The check that applies, before anything is timed: requireFairGpu for a GPU comparison, else
 * requireFairBlas. `engine`: { backend, matMul, adapter }; `args`: the bench's { device, rehearse }.
 * Returns what each side runs on, and `rehearsal`.
 */
export function requireFairComparison(peer, engine, args) {
  if (isGpuComparison(engine.backend, args.device)) return requireFairGpu(peer, engine, args);
  return { ...requireFairBlas(peer, engine), rehearsal: false };
}

/** The BLAS-like libraries mapped into process `pid` (its /proc/<pid>/maps), resolved paths. */
export function mappedBlas(pid = process.pid) {
  const libs = [];
  for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
    const path = line.split(/\s+/).slice(5).join(' ');
    if (/\.so/.test(path) && /blas|lapack|mkl|blis/i.test(basename(path)) && !libs.includes(path)) libs.push(path);
  }
  return libs;
}

/** An optimised BLAS among the mapped libraries: OpenBLAS (any Debian flavour), MKL or BLIS. */
export const optimisedBlas = (libs) => libs.filter((p) => /openblas|mkl|blis/i.test(p));

const HOW =
  'install OpenBLAS (`apt-get install libopenblas0-pthread`, or `WANT_TORCH=1 npm run setup` as root, which installs it) and run again';

/**
 * A ratio against the peer is printed only when both processes multiply with an optimised BLAS, read
 * from their own mapped libraries. Otherwise says which side lacks what and how to get it, and exits 2,
 * before anything is timed. `engine`: { backend, matMul } (the engine's wasm path needs its OpenBLAS).
 */
export function requireFairBlas(peer, engine) {
  const problems = [];
  const mine = mappedBlas();
  const engineFast =
    engine.backend === 'tensorflow' ||
    (engine.backend === 'wasm' && /^OpenBLAS/.test(engine.matMul) && optimisedBlas(mine).length > 0);
  if (!engineFast)
    problems.push(
      `the engine (pid ${process.pid}, backend ${engine.backend}) has no optimised BLAS mapped` +
        ` (${mine.length ? mine.join(', ') : 'no BLAS library'}; matMul ${engine.matMul}): ${HOW}` +
        (process.env.ATTENTION_DEBUGGER_NATIVE === '0' ? '; and unset ATTENTION_DEBUGGER_NATIVE=0' : ''),
    );
  const theirs = mappedBlas(peer.pid);
  if (optimisedBlas(theirs).length === 0)
    problems.push(
      `the PyTorch peer (pid ${peer.pid}) has no optimised BLAS mapped: it runs on ` +
        `${theirs.length ? theirs.join(', ') : 'no BLAS library'}` +
        (theirs.some((p) => /\/blas\/libblas\.so/.test(p)) ? " (Debian's reference BLAS, ~20× slower)" : '') +
        ` instead of OpenBLAS or MKL` +
        (process.env.LD_LIBRARY_PATH ? ` (LD_LIBRARY_PATH=${process.env.LD_LIBRARY_PATH})` : '') +
        `: ${HOW}`,
    );
  if (problems.length === 0) return { engine: optimisedBlas(mine), peer: optimisedBlas(theirs) };
  console.error(`bench: refusing to compare the engine with PyTorch, the comparison would be unfair:`);
  for (const p of problems) console.error(`  - ${p}`);
  peer.kill();
  process.exit(2);
}
