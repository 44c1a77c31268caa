// README's check of the head-role rules (issue 32 item 5): on trained reverse and sort models, the
// roles the written rules give each head (src/protocol/roles.ts, on the run's last telemetry row)
// against the roles people gave it by looking at its attention maps (scripts/*-roles.json).
//   node scripts/role-agreement.mjs --sheet RUN [--out FILE]   draws RUN's last probe maps, every
//       head named and nothing else (no rule's label), for labelling by hand
//   node scripts/role-agreement.mjs --sheets RUN --out DIR   draws a sheet a head of RUN's newest
//       checkpoint over all its probe pairs (those the rules average over: roleSheets.mjs)
//   node scripts/role-agreement.mjs [--runs DIR] [--stored]    trains the runs the labellings name
//       (unless DIR holds them; --stored: trains none), prints each head's labels, the share of heads
//       where each labelling agrees with the rules, and where two labellings of a run agree
// A head agrees when both give the same set of roles. `dead` is left out of both: it is a rule on
// the gradient, which no map shows. A labelling names the run it was given on by the SHA-256 of the
// run's last telemetry line (`row`): the same command trains the same run only on the same machine
// (OpenBLAS splits a product over the cores, and another core count or CPU rounds otherwise), and a
// run whose row differs is not compared.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectCode } from './projectCode.mjs';
import { canvas, drawText, encodeApng, fillRect } from './apng.mjs';
import { writeHeadSheets } from './roleSheets.mjs';
import { loadEngine } from '../bench/lib/build.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function lastSnapshot(run, readSnapshotFile) {
  const dir = join(run, 'snapshots');
  const steps = readdirSync(dir)
    .map((f) => /^step-(\d+)\.(safetensors|json)$/.exec(f))
    .filter(Boolean)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  return readSnapshotFile(join(dir, steps[steps.length - 1][0]));
}

/** Every head's map of the run's last snapshot (probe pair 0), a row of heads per kind and layer. */
function sheet(snap, viridis) {
  const CELL = 16;
  const S = 2;
  const PAD = 16;
  const { src, tgt } = snap.pairs[0];
  const kinds = snap.pairs[0].maps;
  const [layers, heads] = kinds[0].shape;
  const box = Math.max(src.length, tgt.length) * CELL + 40;
  const c = canvas(PAD * 2 + heads * box + 40, PAD + 30 + kinds.length * layers * (box + 24), [0x1e, 0x1e, 0x1e]);
  drawText(c, `step ${snap.step}: source ${src.join(' ')}   target ${tgt.join(' ')}`, PAD, PAD, S, [0xcc, 0xcc, 0xcc]);
  let y = PAD + 30;
  for (const m of kinds) {
    const [, , Q, K] = m.shape;
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const x = PAD + h * box;
        drawText(
          c,
          `${m.kind}:${l}.${h}`.replace('encoder_self', 'enc').replace('decoder_self', 'dec'),
          x,
          y,
          S,
          [0xcc, 0xcc, 0xcc],
        );
        const base = (l * heads + h) * Q * K;
        for (let q = 0; q < Q; q++)
          for (let k = 0; k < K; k++)
            fillRect(c, x + k * CELL, y + 20 + q * CELL, CELL - 1, CELL - 1, viridis(m.weights[base + q * K + k]));
      }
      y += box + 24;
    }
  }
  return c;
}

function args(argv) {
  const o = { sheet: undefined, sheets: undefined, out: undefined, runs: join(tmpdir(), 'alignment-study') };
  const valued = { '--sheet': 'sheet', '--sheets': 'sheets', '--out': 'out', '--runs': 'runs' };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--stored') o.stored = true;
    else if (!valued[argv[i]]) throw new Error(`role-agreement: unknown argument ${argv[i]}`);
    else if (argv[i + 1] === undefined || argv[i + 1].startsWith('--'))
      throw new Error(`role-agreement: ${argv[i]} takes a path`);
    else o[valued[argv[i]]] = resolve(argv[++i]);
  }
  if (o.stored && (o.sheet || o.sheets)) throw new Error('role-agreement: --stored compares runs; it draws no sheet');
  return o;
}

/** The trained runs labels are given on (seeds 1 and 2 of the reverse and the sort task, 600 steps). */
const trained = (task, seed) =>
  ['--task', task, '--config', 'tiny', '--telemetry-every', '10', '--snapshot-every', '100']
    .concat(['--eval-every', '100', '--bleu-sentences', '0', '--steps', '600', '--checkpoint-every', '600'])
    .concat(['--seed', String(seed)]);
const RUNS = {
  'seed-1': trained('reverse', 1),
  'sort-seed-1': trained('sort', 1),
  'seed-2': trained('reverse', 2),
  'sort-seed-2': trained('sort', 2),
};

/**
 * Labels given by eye: [what, file of scripts/]; each file's runs.<name> holds `row` (the digest of
 * the run's last telemetry line it was given on) and `heads`, a head's roles by its name.
 */
const LABELLINGS = [
  ['by hand from one pair', 'hand-roles.json'],
  ['blind from 32 pairs', 'blind-roles.json'],
  ['reviewer A', 'reviewer-a-roles.json'],
  ['reviewer B', 'reviewer-b-roles.json'],
];

/** The SHA-256 (16 hex digits) of a run's last telemetry line, which names the run a labelling is of. */
function rowDigest(dir) {
  const last = readFileSync(join(dir, 'telemetry.jsonl'), 'utf8').trimEnd().split('\n').at(-1);
  return createHash('sha256').update(last).digest('hex').slice(0, 16);
}

/**
 * RUN's folder under DIR: as it is where it holds a telemetry log (a run, or the last row of one as
 * test/fixtures/role-agreement/ stores it), else trained there, unless `stored` (then undefined).
 */
function trainRun(dir, train, stored) {
  if (existsSync(join(dir, 'telemetry.jsonl'))) return dir;
  if (stored) {
    console.log(`role-agreement: no run ${dir} (--stored trains none)`);
    return undefined;
  }
  console.log(`role-agreement: training ${train.join(' ')} --out ${dir}`);
  const r = spawnSync(process.execPath, [join(repo, 'dist', 'cli.js'), 'train', ...train, '--out', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`role-agreement: training failed (exit ${r.status})`);
  return dir;
}

let o;
try {
  o = args(process.argv.slice(2));
} catch (e) {
  console.error(e.message);
  process.exit(2);
}
const code = await projectCode([
  "export { readSnapshotFile } from './src/engine/run/snapshots';",
  "export { headRoles } from './src/protocol/roles';",
  "export { readJsonLines } from './src/engine/io/jsonLines';",
  "export { viridis } from './webview/lib/colormap';",
]);
/** Every probe pair's attention at RUN's newest checkpoint, with its tokens: [{src, tgt, maps}]. */
async function probePairs(run) {
  const engine = await loadEngine(); // tfjs, which projectCode's in-memory bundle cannot hold
  await engine.initBackend('cpu');
  const { src, tgt } = engine.probeBatchOf(run);
  const model = engine.loadCheckpoint(engine.resolveCheckpoint(run).weightsPath, true);
  const vocab = engine.loadVocabulary(join(run, 'vocab.json'));
  try {
    const att = await engine.attentionOfPairs(model, src, tgt);
    return att.map((a, b) => ({ src: vocab.tokens(src[b]), tgt: vocab.tokens(tgt[b]), maps: a.maps }));
  } finally {
    model.dispose();
  }
}

if (o.sheets) {
  const pairs = await probePairs(o.sheets);
  const files = writeHeadSheets(pairs, o.out ?? join(tmpdir(), 'role-sheets'), code.viridis);
  console.log(`role-agreement: ${files.length} sheets of ${pairs.length} pairs in ${dirname(files[0])}`);
} else if (o.sheet) {
  const out = o.out ?? join(tmpdir(), 'role-sheet.png');
  writeFileSync(out, encodeApng([sheet(lastSnapshot(o.sheet, code.readSnapshotFile), code.viridis)], [1000]));
  console.log(`role-agreement: ${out}`);
} else {
  const labellings = LABELLINGS.map(([what, file]) => ({
    what,
    runs: JSON.parse(readFileSync(join(repo, 'scripts', file), 'utf8')).runs,
  }));
  const tally = new Map(); // who agrees → [agreeing, heads]
  const count = (key, same) => {
    const t = tally.get(key) ?? [0, 0];
    tally.set(key, [t[0] + (same ? 1 : 0), t[1] + 1]);
  };
  const cell = (roles) => (roles.length ? roles.join(', ') : '(none)').padEnd(26);
  for (const [name, train] of Object.entries(RUNS)) {
    const named = labellings.filter((l) => l.runs[name]);
    const dir = named.length ? trainRun(join(o.runs, name), train, o.stored) : undefined;
    if (!dir) continue;
    const digest = rowDigest(dir);
    const given = named.filter((l) => {
      if (l.runs[name].row === digest) return true;
      console.log(
        `role-agreement: ${l.what} was given on another run of ${name} (row ${l.runs[name].row}, here ${digest})`,
      );
      return false;
    });
    if (!given.length) continue;
    const row = code.readJsonLines(join(dir, 'telemetry.jsonl')).at(-1);
    for (const l of given)
      for (const head of Object.keys(l.runs[name].heads))
        if (!row.heads.includes(head)) console.log(`role-agreement: ${l.what} labels ${head}, which ${name} has not`);
    const rules = code.headRoles(row);
    console.log(
      `${name} (step ${row.step}, row ${digest}): head | the rules | ${given.map((l) => l.what).join(' | ')}`,
    );
    row.heads.forEach((head, i) => {
      const labels = [rules[i].filter((r) => r !== 'dead'), ...given.map((l) => l.runs[name].heads[head] ?? [])];
      const [rule, ...by] = labels.map((r) => [...r].sort().join(','));
      by.forEach((b, k) => count(`the rules and ${given[k].what}`, b === rule));
      by.forEach((b, k) =>
        by.slice(k + 1).forEach((c, j) => {
          const pair = `${given[k].what} and ${given[k + 1 + j].what}`;
          count(pair, b === c);
          const where = `the rules and where ${pair} agree`;
          if (b === c) count(where, b === rule);
          else if (!tally.has(where)) tally.set(where, [0, 0]); // printed even if they never agree
        }),
      );
      const marks = by.map((b) => (b === rule ? ' ' : '≠')).join('');
      console.log(`  ${marks} ${head.padEnd(18)} ${labels.map((r) => cell([...r].sort())).join(' | ')}`);
    });
  }
  if (!tally.size) {
    console.error(`role-agreement: no labelling was compared (runs in ${o.runs})`);
    process.exit(1);
  }
  for (const [key, [agree, all]] of tally) {
    const share = all ? `${((100 * agree) / all).toFixed(1)}%` : 'no heads';
    console.log(`role-agreement: ${key}: ${agree} of ${all} heads agree (${share})`);
  }
}
