/**
 * Hostile files and output targets (issue 27, items 1, 2, 5, 9): rows of bad input for
 * malformed.test.ts, in the form malformed-plants.ts describes.
 *
 * 1. A run file that is a link to /dev/zero, a FIFO or a folder is refused by name before it is
 *    opened (reading /dev/zero takes all memory, opening a FIFO blocks); a link to a regular file is
 *    read as the file.
 * 2. `--out` of average and batches: never a folder, a FIFO, a device, a file of a run; its folder
 *    must exist; an existing regular file only with --force (output-targets.test.ts: what --force
 *    replaces).
 * 5. A failing command changes nothing: a resume checks every file it writes before its first write.
 * 9. Errors name the file or flag at fault, never a raw errno or a temp file.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CKPT, decode, micro, type MalformedCase, type Plant, resume, train } from './malformed-plants';

/** Replaces what is at the path with a symbolic link to `target`. */
export const linkTo =
  (target: string) =>
  (path: string): void => {
    rmSync(path, { force: true, recursive: true });
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(target, path);
  };

/** Replaces what is at the path with a FIFO (mkfifo(1): node:fs makes none). */
export const fifo = (path: string): void => {
  rmSync(path, { force: true, recursive: true });
  mkdirSync(dirname(path), { recursive: true });
  const r = spawnSync('mkfifo', [path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mkfifo ${path}: ${r.stderr}`);
};

/** Replaces what is at the path with an empty folder. */
export const folder: Plant = (path) => {
  rmSync(path, { force: true, recursive: true });
  mkdirSync(path, { recursive: true });
};

/** Moves the file to `<name>.real` beside the run and leaves a link to it in its place. */
const linkedAway: Plant = (path) => {
  const real = join(dirname(path), '..', `${path.split('/').pop()}.real`);
  renameSync(path, real);
  symlinkSync(real, path);
};

const zero = linkTo('/dev/zero');
const average = (...args: string[]) => ['average', '--run', '{case}/run', ...args];
const batches = (...args: string[]) => ['batches', '--run', '{case}/run', '--steps', '2', ...args];
const NOT_REGULAR = 'not a regular file';

/** The same bad --out for average and batches. */
function outputRows(
  name: string,
  out: string,
  files: Record<string, Plant>,
  error: string,
  extra: string[] = [],
): MalformedCase[] {
  return [
    { name: `average --out ${name}`, args: average('--out', out, ...extra) },
    { name: `batches --out ${name}`, args: batches('--out', out, ...extra) },
  ].map((r) => ({ ...r, issue: 27, item: 2, run: true, files, code: 1, error }));
}

export const HOSTILE_FILES: MalformedCase[] = [
  // 1. Special files read as run files
  {
    name: 'config.json a link to /dev/zero (decode)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/config.json': zero },
    args: decode(),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/run/config.json (a link to /dev/zero): a character device, ${NOT_REGULAR}`,
  },
  {
    name: 'metrics.jsonl a link to /dev/zero (resume)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/metrics.jsonl': zero },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/run/metrics.jsonl (a link to /dev/zero): a character device, ${NOT_REGULAR}`,
  },
  {
    name: 'the newest checkpoint a link to /dev/zero (decode)',
    issue: 27,
    item: 1,
    run: true,
    files: { [CKPT]: zero },
    args: decode(),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/${CKPT} (a link to /dev/zero): a character device`,
  },
  {
    name: 'the newest checkpoint a link to /dev/zero (resume)',
    issue: 27,
    item: 1,
    run: true,
    files: { [CKPT]: zero },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/${CKPT} (a link to /dev/zero): a character device, ${NOT_REGULAR}`,
  },
  {
    name: 'vocab.json a link to /dev/zero (decode)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/vocab.json': zero },
    args: decode(),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/run/vocab.json (a link to /dev/zero): a character device, ${NOT_REGULAR}`,
  },
  {
    name: 'vocab.json a FIFO (decode)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/vocab.json': fifo },
    args: decode(),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/run/vocab.json: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'status.json a FIFO (resume)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/status.json': fifo },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/run/status.json: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'a FIFO named checkpoints/step-9.safetensors, newer than every checkpoint (decode)',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/checkpoints/step-9.safetensors': fifo },
    args: decode(),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/run/checkpoints/step-9.safetensors: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'a --config that is a FIFO',
    issue: 27,
    item: 1,
    files: { 'config.json': fifo },
    args: train('--task', 'copy', '--config', '{case}/config.json', '--out', '{case}/new'),
    code: 1,
    error: `{case}/config.json: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'a corpus file that is a FIFO',
    issue: 27,
    item: 1,
    files: { 'micro.json': micro(), 'data/train.de': 'a b\n', 'data/train.en': fifo },
    args: train('--data', '{case}/data', '--config', '{case}/micro.json', '--out', '{case}/new'),
    code: 1,
    error: `{case}/data/train.en: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'config.json and vocab.json links to regular files: decode reads them as the files',
    issue: 27,
    item: 1,
    run: true,
    files: { 'run/config.json': linkedAway, 'run/vocab.json': linkedAway },
    args: decode(),
    stdin: '4 5 6\n',
    code: 0,
    error: 'backend: wasm',
  },
  // 2. Output targets
  ...outputRows('a FIFO', '{case}/out', { out: fifo }, `--out {case}/out: is a FIFO (named pipe), ${NOT_REGULAR}`),
  ...outputRows(
    'a link to /dev/null',
    '{case}/null',
    { null: linkTo('/dev/null') },
    `--out {case}/null (a link): is a character device, ${NOT_REGULAR}`,
  ),
  ...outputRows('a folder', '{case}/dir', { dir: folder }, `--out {case}/dir: is a folder, ${NOT_REGULAR}`),
  ...outputRows(
    'in a folder that does not exist',
    '{case}/missing/out.bin',
    {},
    '--out {case}/missing/out.bin: the folder {case}/missing does not exist',
  ),
  ...outputRows(
    'a file that exists, without --force',
    '{case}/old.bin',
    { 'old.bin': 'kept\n' },
    '--out {case}/old.bin: already exists; give --force to replace it',
  ),
  ...outputRows(
    "the run's newest checkpoint, even with --force",
    `{case}/${CKPT}`,
    {},
    `--out {case}/${CKPT}: is the run {case}/run's own step-6.safetensors`,
    ['--force'],
  ),
  ...outputRows(
    "a link to the run's config.json, with --force",
    '{case}/cfg',
    { cfg: linkTo('run/config.json') },
    "is the run {case}/run's own config.json",
    ['--force'],
  ),
  ...outputRows(
    'a new checkpoint name inside the run',
    '{case}/run/checkpoints/step-99.safetensors',
    {},
    "--out {case}/run/checkpoints/step-99.safetensors: is the run {case}/run's own step-99.safetensors",
  ),
  {
    name: 'train --out under a regular file',
    issue: 27,
    item: 2,
    files: { 'micro.json': micro(), file: 'x\n' },
    args: train('--task', 'copy', '--config', '{case}/micro.json', '--out', '{case}/file/run'),
    code: 1,
    error: '--out {case}/file/run: {case}/file is not a folder',
  },
  // 5. A failing command changes nothing
  {
    name: 'resume with status.json a folder: config.json keeps its steps, no temp file',
    issue: 27,
    item: 5,
    run: true,
    files: { 'run/status.json': folder },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/run/status.json: a folder, ${NOT_REGULAR}`,
  },
  {
    name: 'resume with metrics.jsonl a folder',
    issue: 27,
    item: 5,
    run: true,
    files: { 'run/metrics.jsonl': folder },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/run/metrics.jsonl: a folder, ${NOT_REGULAR}`,
  },
  {
    name: 'resume with telemetry.jsonl a FIFO',
    issue: 27,
    item: 5,
    run: true,
    files: { 'run/telemetry.jsonl': fifo },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/run/telemetry.jsonl: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
  {
    name: 'resume with snapshots a file, not a folder',
    issue: 27,
    item: 5,
    run: true,
    files: { 'run/snapshots': (path) => (rmSync(path, { recursive: true }), writeFileSync(path, 'x')) },
    args: resume('--steps', '8'),
    code: 1,
    error: '{case}/run/snapshots: a regular file, not a folder',
  },
  // 9. Raw errors
  {
    name: 'resume with checkpoints a file: named, not a raw ENOTDIR',
    issue: 27,
    item: 9,
    run: true,
    files: { 'run/checkpoints': (path) => (rmSync(path, { recursive: true }), writeFileSync(path, 'x')) },
    args: resume('--steps', '8'),
    code: 1,
    error: '{case}/run/checkpoints: a regular file, not a folder',
  },
  {
    name: '--fork RUN@abc: the step is not a number, not "not a run folder"',
    issue: 27,
    item: 9,
    run: true,
    args: train('--fork', '{case}/run@abc', '--out', '{case}/fork'),
    code: 2,
    error: '--fork {case}/run@abc: "abc" after @ is not a step; give {case}/run@STEP',
  },
  {
    name: '--fork RUN@ with no step',
    issue: 27,
    item: 9,
    run: true,
    args: train('--fork', '{case}/run@', '--out', '{case}/fork'),
    code: 2,
    error: '--fork {case}/run@: "" after @ is not a step',
  },
  {
    name: 'decode --checkpoint a FIFO',
    issue: 27,
    item: 9,
    run: true,
    files: { 'c.safetensors': fifo },
    args: decode('--checkpoint', '{case}/c.safetensors'),
    stdin: '4 5 6\n',
    code: 1,
    error: `{case}/c.safetensors: a FIFO (named pipe), ${NOT_REGULAR}`,
  },
];
