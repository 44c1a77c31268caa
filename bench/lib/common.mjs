// Shared by the bench scripts: arguments, timing, the machine's description, the PyTorch peer.
import console from 'node:console';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import process from 'node:process';
import { join } from 'node:path';
import { root } from './build.mjs';

export const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';

/** --name value / --flag from argv, with defaults: parseArgs({ steps: 10 }) → { steps: 10, … } */
export function parseArgs(defaults) {
  const out = { ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([\w-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unexpected argument ${argv[i]}`);
    const key = m[1].replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!(key in defaults)) throw new Error(`unknown option --${m[1]} (known: ${Object.keys(defaults).join(', ')})`);
    const raw = m[2] ?? (typeof defaults[key] === 'boolean' ? 'true' : argv[++i]);
    out[key] =
      typeof defaults[key] === 'number' ? Number(raw) : typeof defaults[key] === 'boolean' ? raw !== 'false' : raw;
  }
  return out;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const now = () => Number(process.hrtime.bigint()) / 1e9;

/** Peak resident set of this process in MiB (maxRSS is in KiB). */
export const peakRssMiB = () => process.resourceUsage().maxRSS / 1024;

export function machine() {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?';
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim();
  return {
    date: new Date().toISOString(),
    nproc,
    cpu: model,
    load: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    node: process.version,
  };
}

/** Runs bench/<script> with the peer's Python, passing args; its last stdout line is JSON. */
export function runPeer(script, args) {
  const r = spawnSync(PYTHON, [join(root, 'bench', script), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0)
    throw new Error(`${PYTHON} bench/${script} exited with ${r.status}${r.signal ? ` (${r.signal})` : ''}`);
  const lines = r.stdout.trim().split('\n');
  for (const line of lines.slice(0, -1)) console.log(`  [peer] ${line}`);
  return JSON.parse(lines[lines.length - 1]);
}

export function header(title, engineInfo, peer) {
  const m = machine();
  console.log(`# ${title}`);
  console.log(`date ${m.date}; ${m.nproc} CPUs (${m.cpu}); load average ${m.load} (1/5/15 min); node ${m.node}`);
  console.log(`engine: tfjs ${engineInfo}`);
  const chosen = ['ADAM', 'GEMM', 'ATTENTION'].map((k) => `ATTENTION_DEBUGGER_${k}`).filter((k) => process.env[k]);
  if (chosen.length) console.log(`        with ${chosen.map((k) => `${k}=${process.env[k]}`).join(', ')}`);
  if (peer?.gpu) {
    const peak = peer.fp32_peak_tflops ? `${peer.fp32_peak_tflops.toFixed(1)} TFLOP/s` : 'unknown';
    console.log(
      `peer:   PyTorch ${peer.torch} (${peer.python}) on ${peer.gpu} (sm ${peer.capability}, ${peer.sms} SMs,`,
    );
    console.log(
      `        max SM clock ${peer.max_sm_mhz} MHz, driver ${peer.driver}, CUDA ${peer.cuda}); fp32 peak ${peak}`,
    );
    console.log('        products in full fp32 (TF32 off) unless a line says TF32');
  } else if (peer)
    console.log(`peer:   PyTorch ${peer.torch} (${peer.python}); BLAS ${peer.blas}; torch threads ${peer.threads}`);
}

/** A result's name and title, labelled for a GPU comparison (`-gpu`) and a rehearsal (bench/lib/peer.mjs). */
export function labelled(name, title, gpu, fair) {
  return {
    name: gpu ? `${name}-gpu${fair.rehearsal ? '-rehearsal' : ''}` : name,
    title: fair.rehearsal ? `REHEARSAL (not a measurement): ${title}` : title,
  };
}

/**
 * The engine's Adam as a run makes it (train/optimizer.ts: flat on webgpu, per parameter elsewhere);
 * an engine bundled from a commit before the flat layout has only the per-parameter one.
 */
export const optimizerOf = (engine) =>
  engine.createOptimizer ? engine.createOptimizer() : new engine.Adam(engine.PAPER_ADAM);

/** The engine's GPU adapter for a bench's checks and header: { software, line }, or null. */
export function engineAdapter(engine) {
  const probe = engine.probeGpu();
  return probe.adapter ? { software: probe.adapter.software, line: engine.describeAdapter(probe) } : null;
}

/**
 * Prints rows of { name, engine: [per round], peer: [per round], ratios: [per round] }: each side's
 * median and min–max, and the median of the per-round ratios engine/peer with its min–max.
 */
export function roundsTable(rows, unit, rss) {
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const span = (xs) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
  const w = Math.max(...rows.map((r) => r.name.length), 4);
  console.log(`${'case'.padEnd(w)}  ${'engine'.padStart(8)}  ${'PyTorch'.padStart(8)}  ratio (min–max)  ${unit}`);
  for (const r of rows) {
    const ratio = `${median(r.ratios).toFixed(3)} (${Math.min(...r.ratios).toFixed(2)}–${Math.max(...r.ratios).toFixed(2)})`;
    console.log(
      `${r.name.padEnd(w)}  ${fmt(median(r.engine)).padStart(8)}  ${fmt(median(r.peer)).padStart(8)}  ${ratio.padEnd(15)}  (min–max: engine ${span(r.engine)}, PyTorch ${span(r.peer)}; ${r.ratios.length} rounds)`,
    );
  }
  console.log(`peak RSS: engine ${rss.engine.toFixed(0)} MiB, PyTorch ${rss.peer.toFixed(0)} MiB`);
}

/**
 * Writes bench/results/<name>.json: the machine, versions, each side's BLAS and threads, and the
 * figures (`figures`: whatever the bench measured). One file per benchmark, the last run's.
 */
export function writeResult(name, figures) {
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  const threads = {
    nproc: machine().nproc,
    ATTENTION_DEBUGGER_BLAS_THREADS: process.env.ATTENTION_DEBUGGER_BLAS_THREADS ?? null,
    OPENBLAS_NUM_THREADS: process.env.OPENBLAS_NUM_THREADS ?? null,
    OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? null,
  };
  writeFileSync(file, `${JSON.stringify({ bench: name, machine: machine(), threads, ...figures }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}
