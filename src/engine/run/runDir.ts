/**
 * A run folder on disk:
 *   config.json                    model fields + "training" settings + "data" spec
 *   vocab.json                     the vocabulary
 *   metrics.jsonl                  one JSON object a step (and validation lines)
 *   checkpoints/step-N.safetensors the model, PyTorch state_dict names (loadable on its own)
 *   checkpoints/step-N.optim.safetensors  Adam's moments and the data position, for --resume
 *   snapshots/step-N.safetensors   attention of the probe pair at step N (snapshots.ts)
 *   status.json                    running, completed, stopped, failed
 * (docs/RUN_FOLDER.md has the whole format.) Every file is written whole (temp + rename) or appended
 * a line at a time, so a process killed at any moment leaves a folder that resumes from its newest
 * complete checkpoint.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { listCheckpoints, readConfig } from '../checkpoint';
import { writeSafetensors, type NamedTensor } from '../checkpoint/safetensors';
import { checkReplaceable, TEMP_SUFFIX, writeFileAtomic } from '../io/atomicFile';
import { folderEntries } from '../io/regularFile';
import type { TransformerConfig } from '../model/config';
import {
  checkpointName,
  optimizerName,
  RUN_FILES,
  SNAPSHOT_FILE,
  snapshotName,
  stepOf,
  type RunState,
} from '../../protocol/runFolder';
import { readSnapshotFile, type Snapshot, writeSnapshotFile } from './snapshots';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';
import { readJsonFile } from '../io/json';
import { readJsonLines } from '../io/jsonLines';

export interface MetricsRow {
  step: number;
  lr: number;
  loss: number;
  nll?: number;
  tokens_per_sec?: number;
  grad_norm?: number;
  val_loss?: number;
  val_bleu?: number;
  time?: number;
}

/** Where in the data the run stands after a checkpointed step. */
export interface DataPosition {
  epoch: number;
  batch: number;
}

/**
 * True when a temp name (`<file>.tmp-<pid>-<ms>`, or a run folder's staging `.<run>.tmp-<pid>-<ms>`)
 * belongs to a process that is gone: its file will never be renamed, so it may be deleted. A live
 * writer's (another process still writing, or this one) is never touched.
 */
export function isDeadWritersTemp(name: string): boolean {
  const m = /\.tmp-(\d+)-\d+$/.exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  if (pid === process.pid || pid <= 0) return false;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export class RunDir {
  constructor(readonly path: string) {}
  get configPath(): string {
    return join(this.path, RUN_FILES.config);
  }
  get vocabPath(): string {
    return join(this.path, RUN_FILES.vocab);
  }
  get metricsPath(): string {
    return join(this.path, RUN_FILES.metrics);
  }
  get checkpointsDir(): string {
    return join(this.path, RUN_FILES.checkpoints);
  }
  get snapshotsDir(): string {
    return join(this.path, RUN_FILES.snapshots);
  }

  create(): void {
    mkdirSync(this.checkpointsDir, { recursive: true });
    mkdirSync(this.snapshotsDir, { recursive: true });
  }

  /**
   * Creates the run folder whole or not at all: `write` fills a staging folder beside it (on the
   * same file system, `.<name>.tmp-<pid>-<ms>`), which is then renamed into place. A failure on the
   * way removes the staging folder and leaves `path` as it was; staging folders of dead processes
   * are removed first. `path` must not exist, or be an empty folder.
   */
  static createWhole(path: string, write: (staged: RunDir) => void): RunDir {
    const target = resolve(path);
    const parent = dirname(target);
    const name = basename(target);
    for (let up = parent; !existsSync(up) || !statSync(up).isDirectory(); up = dirname(up))
      if (existsSync(up)) throw new Error(`--out ${path}: ${up} is not a folder; choose another --out`);
    mkdirSync(parent, { recursive: true });
    for (const f of readdirSync(parent))
      if (f.startsWith(`.${name}.tmp-`) && isDeadWritersTemp(f))
        rmSync(join(parent, f), { recursive: true, force: true });
    const staging = join(parent, `.${name}.tmp-${process.pid}-${Date.now()}`);
    mkdirSync(staging);
    try {
      const staged = new RunDir(staging);
      staged.create();
      write(staged);
      if (existsSync(target) && statSync(target).isDirectory() && readdirSync(target).length === 0) rmdirSync(target);
      renameSync(staging, target);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR' || code === 'ENOTDIR')
        throw new Error(`${path} appeared while the run was being created; choose another --out`);
      throw err;
    }
    return new RunDir(path);
  }

  exists(): boolean {
    return existsSync(this.configPath);
  }

  /**
   * Refuses, before a resume writes anything, what its writes would fail on or replace: a run file
   * that is there but is not a regular file (a folder, a FIFO, a link to a device), and a
   * checkpoints/ or snapshots/ that is not a folder. Errors name the file.
   */
  checkWritable(): void {
    const files = [this.configPath, this.vocabPath, this.statusPath, this.metricsPath, this.telemetryPath];
    for (const path of [...files, this.eventsPath]) checkReplaceable(path);
    for (const dir of [this.checkpointsDir, this.snapshotsDir]) folderEntries(dir);
  }

  writeConfig(config: object): void {
    writeFileAtomic(this.configPath, [Buffer.from(`${JSON.stringify(config, null, 2)}\n`)]);
  }

  /** The model config (validated) and the raw object with the training and data sections. */
  readConfig(): { model: TransformerConfig; raw: Record<string, unknown> } {
    const model = readConfig(this.configPath);
    return { model, raw: readJsonFile(this.configPath) as Record<string, unknown> };
  }

  appendMetrics(rows: MetricsRow[]): void {
    if (rows.length) appendFileSync(this.metricsPath, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }

  /** Every complete metrics line; a torn last line (a kill mid-write) is ignored. */
  readMetrics(): MetricsRow[] {
    return readJsonLines<MetricsRow>(this.metricsPath);
  }

  get telemetryPath(): string {
    return join(this.path, RUN_FILES.telemetry);
  }
  get eventsPath(): string {
    return join(this.path, RUN_FILES.events);
  }

  appendTelemetry(row: TelemetryRow): void {
    appendFileSync(this.telemetryPath, `${JSON.stringify(row)}\n`);
  }

  readTelemetry(): TelemetryRow[] {
    return readJsonLines<TelemetryRow>(this.telemetryPath);
  }

  /** Appends a finding; a non-finite `value` (JSON has no NaN) is left out rather than written as null. */
  appendEvent(event: RunEvent): void {
    const { value, ...rest } = event;
    const line = value === undefined || Number.isFinite(value) ? event : rest;
    appendFileSync(this.eventsPath, `${JSON.stringify(line)}\n`);
  }

  readEvents(): RunEvent[] {
    return readJsonLines<RunEvent>(this.eventsPath);
  }

  /** Drops metrics, telemetry and events past `step` (they are redone from the checkpoint), each file rewritten atomically. */
  truncateMetrics(step: number): void {
    for (const [path, rows] of [
      [this.metricsPath, this.readMetrics()],
      [this.telemetryPath, this.readTelemetry()],
      [this.eventsPath, this.readEvents()],
    ] as const) {
      if (!existsSync(path)) continue;
      const kept = (rows as { step: number }[]).filter((r) => r.step <= step);
      writeFileAtomic(path, [Buffer.from(kept.map((r) => `${JSON.stringify(r)}\n`).join(''))]);
    }
  }

  weightsPath(step: number): string {
    return join(this.checkpointsDir, checkpointName(step));
  }
  optimPath(step: number): string {
    return join(this.checkpointsDir, optimizerName(step));
  }

  /**
   * Writes the optimizer state first and the model last: the model file's rename is the commit
   * point, and a checkpoint counts only when both files are there.
   */
  writeCheckpoint(
    step: number,
    weights: Map<string, NamedTensor>,
    optim: Map<string, NamedTensor>,
    position: DataPosition,
  ): void {
    writeSafetensors(this.optimPath(step), optim, {
      step: String(step),
      epoch: String(position.epoch),
      batch: String(position.batch),
    });
    writeSafetensors(this.weightsPath(step), weights, { step: String(step) });
  }

  /** Newest checkpoint with both files readable, or null. */
  /** The step of the newest checkpoint whose model file is complete, if any. */
  newestCheckpointStep(): number | undefined {
    return listCheckpoints(this.path).pop()?.step;
  }

  /**
   * Removes what writers killed mid-write left (writeFileAtomic's `<file>.tmp-<pid>-<time>`, in the
   * run's root, checkpoints/ and snapshots/), once their process is gone; never a whole file, and
   * never a temp file of a live writer. Called when a run is opened for writing (a resume).
   */
  removeTornWrites(): void {
    for (const dir of [this.path, this.checkpointsDir, this.snapshotsDir]) {
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) if (TEMP_SUFFIX.test(f) && isDeadWritersTemp(f)) unlinkSync(join(dir, f));
    }
  }

  /** Steps that have an attention snapshot (either format), ascending. */
  snapshotSteps(): number[] {
    const steps = folderEntries(this.snapshotsDir)
      .map((f) => stepOf(SNAPSHOT_FILE, f))
      .filter((n) => n !== undefined);
    return [...new Set(steps)].sort((a, b) => a - b);
  }

  writeSnapshot(snapshot: Snapshot): void {
    writeSnapshotFile(join(this.snapshotsDir, snapshotName(snapshot.step)), snapshot);
  }

  /** The snapshot of a step: format 2 when both exist. */
  readSnapshot(step: number): Snapshot {
    const path = join(this.snapshotsDir, snapshotName(step));
    return readSnapshotFile(existsSync(path) ? path : join(this.snapshotsDir, `step-${step}.json`));
  }

  get statusPath(): string {
    return join(this.path, RUN_FILES.status);
  }

  /** Rewrites status.json: what a follower of the folder reads to tell a live run from an ended one. */
  writeStatus(state: RunState, step: number, message?: string): void {
    const status = { state, step, time: Date.now(), writer: 'engine', ...(message ? { message } : {}) };
    writeFileAtomic(this.statusPath, [Buffer.from(`${JSON.stringify(status)}\n`)]);
  }
}
