/**
 * Checks a run folder against its format (docs/RUN_FOLDER.md), as any trainer may have written it
 * (the engine, the PyTorch RunWriter, a user's script): config.json, vocab.json, status.json,
 * metrics.jsonl, telemetry.jsonl, events.jsonl, ablations.json, checkpoints/ and snapshots/. Pure: it reads and
 * reports, never repairs. Each problem names the file and, where it applies, the line and the field.
 *
 * What the format allows is not a problem: a last .jsonl line without its `\n` (a write in
 * progress), `*.tmp-<pid>-<ms>` files (a writer killed mid-write), an optimizer file without its
 * model file (killed between the two renames), metrics steps repeated by a resume from a checkpoint
 * (stepOrder.ts: but not two writers' interleaved steps), a writer's writer.lock.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { FileRefused, readTextFile } from '../io/regularFile';
import { join } from 'node:path';
import { ConfigError, validateConfig, type TransformerConfig } from '../model/config';
import { TEMP_SUFFIX } from '../io/atomicFile';
import { ATTENTION_KINDS } from '../../protocol/attention';
import { checkAblationRecords } from '../../protocol/ablation';
import {
  CHECKPOINT_FILE,
  OPTIMIZER_FILE,
  RUN_FILES,
  RUN_FORMAT,
  RUN_STATES,
  SNAPSHOT_FILE,
  stepOf,
} from '../../protocol/runFolder';
import { checkCheckpoint, checkOptimizer, checkSnapshot, type RunProblem } from './checkTensors';
import { type StepLine, stepOrderProblem } from './stepOrder';

export type { RunProblem } from './checkTensors';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown, min: number): v is number => Number.isInteger(v) && (v as number) >= min;

export { formatProblem } from '../../protocol/runCheck';

/**
 * The files the running checkRunFolder call has opened, relative to its folder, in order (each
 * reader below names its file here as it opens it): the list run/check shows is the walk itself.
 */
let opened: string[] = [];

function readJson(dir: string, file: string, problems: RunProblem[]): unknown {
  opened.push(file);
  try {
    return JSON.parse(readTextFile(join(dir, file), 'json'));
  } catch (err) {
    const refused = err instanceof FileRefused;
    problems.push({
      file,
      message: refused ? err.reason : `not valid JSON (${(err as Error).message})`,
    });
    return undefined;
  }
}

function checkConfig(dir: string, problems: RunProblem[]): TransformerConfig | undefined {
  const file = RUN_FILES.config;
  if (!existsSync(join(dir, file))) {
    problems.push({ file, message: 'missing: every run folder starts with its config.json' });
    return undefined;
  }
  const raw = readJson(dir, file, problems);
  if (raw === undefined) return undefined;
  let config: TransformerConfig | undefined;
  try {
    config = validateConfig(raw, file);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const m = /^config\.json: ([^:]+): (.*)$/s.exec(err.message);
    problems.push({ file, ...(m ? { field: m[1]!, message: m[2]! } : { message: err.message }) });
  }
  if (!isObj(raw)) return config;
  const opt = (field: string, ok: boolean, expected: string) => {
    if (raw[field] !== undefined && !ok)
      problems.push({ file, field, message: `expected ${expected}, got ${JSON.stringify(raw[field])}` });
  };
  opt('run_format', raw.run_format === RUN_FORMAT, JSON.stringify(RUN_FORMAT));
  opt('run_format_version', raw.run_format_version === 1 || raw.run_format_version === 2, '1 or 2');
  opt('writer', typeof raw.writer === 'string', 'a string ("engine", "pytorch", …)');
  opt('backend', typeof raw.backend === 'string', 'a string (the backend it trained on: "wasm", "webgpu", …)');
  opt('training', isObj(raw.training), 'an object of training settings');
  opt('fork', isObj(raw.fork), '{"parent", "step", "changes"}');
  const data = raw.data;
  opt(
    'data',
    isObj(data) && ['task', 'gettext', 'files'].includes(data.kind as string),
    '{"kind": "task" | "gettext" | "files", …}',
  );
  return config;
}

function checkVocab(dir: string, config: TransformerConfig | undefined, problems: RunProblem[]): void {
  const file = RUN_FILES.vocab;
  if (!existsSync(join(dir, file))) return;
  const raw = readJson(dir, file, problems);
  if (raw === undefined) return;
  const limit = config ? Math.min(config.src_vocab, config.tgt_vocab) : Infinity;
  if (isObj(raw) && raw.kind === 'task') {
    if (!isInt(raw.size, 5))
      problems.push({ file, field: 'size', message: `expected an integer > 4, got ${JSON.stringify(raw.size)}` });
    else if (raw.size > limit)
      problems.push({ file, field: 'size', message: `${raw.size} ids do not fit the ${limit} embedding rows` });
  } else if (isObj(raw) && raw.format === 'attention-debugger-bpe') {
    if (!Array.isArray(raw.vocab)) problems.push({ file, field: 'vocab', message: 'expected an array of tokens' });
    else if (raw.vocab.length > limit)
      problems.push({
        file,
        field: 'vocab',
        message: `${raw.vocab.length} tokens do not fit the ${limit} embedding rows`,
      });
    if (!Array.isArray(raw.merges)) problems.push({ file, field: 'merges', message: 'expected an array of pairs' });
  } else {
    problems.push({
      file,
      message: 'expected {"kind": "task", "size": V} or a BPE model {"format": "attention-debugger-bpe", …}',
    });
  }
}

function checkStatus(dir: string, version: unknown, problems: RunProblem[]): void {
  const file = RUN_FILES.status;
  if (!existsSync(join(dir, file))) {
    if (version === 2) problems.push({ file, message: 'missing: a format-2 writer keeps status.json' });
    return;
  }
  const s = readJson(dir, file, problems);
  if (s === undefined) return;
  if (!isObj(s)) return void problems.push({ file, message: 'expected a JSON object' });
  if (!RUN_STATES.includes(s.state as never))
    problems.push({
      file,
      field: 'state',
      message: `expected one of ${RUN_STATES.join(', ')}, got ${JSON.stringify(s.state)}`,
    });
  if (!isInt(s.step, 0))
    problems.push({ file, field: 'step', message: `expected an integer >= 0, got ${JSON.stringify(s.step)}` });
  if (!isNum(s.time))
    problems.push({ file, field: 'time', message: `expected milliseconds since 1970, got ${JSON.stringify(s.time)}` });
  for (const f of ['writer', 'message'])
    if (s[f] !== undefined && typeof s[f] !== 'string') problems.push({ file, field: f, message: 'expected a string' });
}

/** Calls `check` on each complete line's object; a last line without `\n` is a write in progress, not a problem. */
function checkJsonLines(
  dir: string,
  file: string,
  problems: RunProblem[],
  check: (row: Obj, at: (field: string, message: string) => void, line: number) => void,
): void {
  const path = join(dir, file);
  if (!existsSync(path)) return;
  opened.push(file);
  let lines: string[];
  try {
    lines = readTextFile(path, 'lines').split('\n');
  } catch (err) {
    if (!(err instanceof FileRefused)) throw err;
    problems.push({ file, message: err.reason });
    return;
  }
  lines.pop(); // after the last '\n': empty, or a partial line the writer is still appending
  lines.forEach((text, i) => {
    const line = i + 1;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (err) {
      problems.push({ file, line, message: text.trim() ? `not valid JSON (${(err as Error).message})` : 'empty line' });
      return;
    }
    if (!isObj(row)) return void problems.push({ file, line, message: 'expected a JSON object' });
    check(row, (field, message) => problems.push({ file, line, field, message }), line);
  });
}

const METRIC_FIELDS = ['nll', 'tokens_per_sec', 'grad_norm', 'val_loss', 'val_bleu', 'time'];

function checkMetricsRow(row: Obj, at: (field: string, message: string) => void): void {
  if (!isInt(row.step, 1)) at('step', `expected an integer >= 1 (steps count from 1), got ${JSON.stringify(row.step)}`);
  if (!isNum(row.lr)) at('lr', `expected a number, got ${JSON.stringify(row.lr)}`);
  // null: a non-finite value (a diverged loss), which JSON cannot write
  if (!isNum(row.loss) && row.loss !== null) at('loss', `expected a number, got ${JSON.stringify(row.loss)}`);
  for (const f of Object.keys(row)) {
    if (f === 'step' || f === 'lr' || f === 'loss') continue;
    if (!METRIC_FIELDS.includes(f)) at(f, 'not a metrics field');
    else if (!isNum(row[f]) && row[f] !== null) at(f, `expected a number, got ${JSON.stringify(row[f])}`);
  }
}

function checkTelemetryRow(row: Obj, at: (field: string, message: string) => void): void {
  if (!isInt(row.step, 0)) at('step', `expected an integer, got ${JSON.stringify(row.step)}`);
  const heads = row.heads;
  if (!Array.isArray(heads) || !heads.every((h) => typeof h === 'string' && /^\w+:\d+\.\d+$/.test(h)))
    return at('heads', 'expected an array of "kind:layer.head"');
  if (!isObj(row.stats)) return at('stats', 'expected an object of per-head arrays');
  for (const [name, values] of Object.entries(row.stats))
    if (!Array.isArray(values) || values.length !== heads.length)
      at(`stats.${name}`, `expected an array of ${heads.length} values, one per head`);
}

function checkEventRow(row: Obj, at: (field: string, message: string) => void): void {
  if (!isInt(row.step, 0)) at('step', `expected an integer, got ${JSON.stringify(row.step)}`);
  if (typeof row.check !== 'string') at('check', 'expected the name of a check');
  if (row.severity !== 'warning' && row.severity !== 'breakpoint')
    at('severity', `expected "warning" or "breakpoint", got ${JSON.stringify(row.severity)}`);
  if (typeof row.message !== 'string') at('message', 'expected a string');
  if (row.head !== undefined && (typeof row.head !== 'string' || !/^\w+:\d+\.\d+$/.test(row.head)))
    at('head', 'expected "kind:layer.head"');
  if (row.value !== undefined && !isNum(row.value)) at('value', 'expected a number');
}

/** The ablations tried on the run (Ablate Heads…): a JSON array of records (protocol/ablation.ts). */
function checkAblations(dir: string, problems: RunProblem[]): void {
  const file = RUN_FILES.ablations;
  if (!existsSync(join(dir, file))) return;
  const raw = readJson(dir, file, problems);
  if (raw === undefined) return;
  const why = checkAblationRecords(raw, 'ablations');
  if (!why) return;
  // `ablations[2].intact must be …`: the field is the path after the file's name.
  const m = /^ablations(\S+) (.*)$/s.exec(why);
  problems.push({ file, ...(m ? { field: m[1]!.replace(/^\./, ''), message: m[2]! } : { message: why }) });
}

function listFolder(dir: string, sub: string): string[] {
  const path = join(dir, sub);
  return existsSync(path) && statSync(path).isDirectory() ? readdirSync(path).sort() : [];
}

function checkCheckpoints(dir: string, config: TransformerConfig | undefined, problems: RunProblem[]): void {
  for (const name of listFolder(dir, RUN_FILES.checkpoints)) {
    if (TEMP_SUFFIX.test(name)) continue; // a write in progress or a killed writer's leftover
    const file = `${RUN_FILES.checkpoints}/${name}`;
    const path = join(dir, file);
    const optimStep = stepOf(OPTIMIZER_FILE, name);
    if (optimStep !== undefined || name.endsWith('.safetensors')) opened.push(file);
    if (optimStep !== undefined) checkOptimizer(path, file, config, optimStep, problems);
    else if (name.endsWith('.safetensors'))
      checkCheckpoint(path, file, config, stepOf(CHECKPOINT_FILE, name), problems);
  }
}

function checkFormat1Snapshot(
  dir: string,
  file: string,
  step: number,
  config: TransformerConfig | undefined,
  problems: RunProblem[],
): void {
  const s = readJson(dir, file, problems);
  if (s === undefined) return;
  if (!isObj(s) || !Array.isArray(s.src) || !Array.isArray(s.tgt) || !isObj(s.attention))
    return void problems.push({ file, message: 'expected {"step", "src", "tgt", "attention"} (format 1)' });
  if (s.step !== step)
    problems.push({ file, field: 'step', message: `is ${JSON.stringify(s.step)}, the name says ${step}` });
  for (const kind of ATTENTION_KINDS) {
    const layers = s.attention[kind];
    const want = config ? (kind === 'encoder_self' ? config.encoder_layers : config.decoder_layers) : undefined;
    if (!Array.isArray(layers)) problems.push({ file, field: `attention.${kind}`, message: 'missing' });
    else if (want !== undefined && layers.length !== want)
      problems.push({ file, field: `attention.${kind}`, message: `has ${layers.length} layers, config has ${want}` });
  }
}

function checkSnapshots(dir: string, config: TransformerConfig | undefined, problems: RunProblem[]): void {
  for (const name of listFolder(dir, RUN_FILES.snapshots)) {
    if (TEMP_SUFFIX.test(name)) continue;
    const file = `${RUN_FILES.snapshots}/${name}`;
    const step = stepOf(SNAPSHOT_FILE, name);
    if (step === undefined) problems.push({ file, message: 'not a snapshot name (step-N.safetensors or step-N.json)' });
    else if (name.endsWith('.json')) checkFormat1Snapshot(dir, file, step, config, problems);
    else {
      opened.push(file);
      checkSnapshot(join(dir, file), file, config, step, problems);
    }
  }
}

/**
 * Every way `dir` departs from the run-folder format; empty when it is a valid run folder. `read`,
 * when given, receives the files the check opened, relative to `dir`, in the order it read them.
 */
export function checkRunFolder(dir: string, read?: string[]): RunProblem[] {
  opened = [];
  try {
    return walkRunFolder(dir);
  } finally {
    read?.push(...opened);
    opened = [];
  }
}

function walkRunFolder(dir: string): RunProblem[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [{ file: '.', message: `${dir}: no such folder` }];
  const problems: RunProblem[] = [];
  const config = checkConfig(dir, problems);
  let raw: Obj = {};
  try {
    raw = JSON.parse(readTextFile(join(dir, RUN_FILES.config), 'json')) as Obj;
  } catch {
    // reported by checkConfig
  }
  const version = isObj(raw) ? raw.run_format_version : undefined;
  checkVocab(dir, config, problems);
  checkStatus(dir, version, problems);
  const steps: StepLine[] = [];
  checkJsonLines(dir, RUN_FILES.metrics, problems, (row, at, line) => {
    checkMetricsRow(row, at);
    if (isInt(row.step, 1)) steps.push({ line, step: row.step });
  });
  const saved = listFolder(dir, RUN_FILES.checkpoints).map((f) => stepOf(CHECKPOINT_FILE, f));
  const order = stepOrderProblem(
    steps,
    isObj(raw) ? raw.writer : undefined,
    saved.filter((s) => s !== undefined),
  );
  if (order) problems.push(order);
  checkJsonLines(dir, RUN_FILES.telemetry, problems, checkTelemetryRow);
  checkJsonLines(dir, RUN_FILES.events, problems, checkEventRow);
  checkAblations(dir, problems);
  checkCheckpoints(dir, config, problems);
  checkSnapshots(dir, config, problems);
  return problems;
}
