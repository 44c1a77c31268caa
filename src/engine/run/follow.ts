/**
 * What a run folder gained since the last poll (protocol/follow.ts), read where the files are: the
 * complete new lines of metrics.jsonl, telemetry.jsonl and events.jsonl (a partial last line
 * waits for the next poll; a rewritten file, seen by its inode or size, is read from the start),
 * new snapshots, the checkpoints, and the writer's activity from status.json and the files' times.
 * A folder written without telemetry (a PyTorch RunWriter) gets its per-head rows from its
 * snapshots, and the health checks run on them here, as they would in the engine's own training.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  FIRST_POLL,
  type FilePosition,
  type FollowState,
  type FollowedFile,
  type PollCursor,
  type RunPoll,
} from '../../protocol/follow';
import { type MetricRow, checkMetricRow } from '../../protocol/metrics';
import { RUN_FILES, RUN_STATES, type RunActivity, STALLED_AFTER_MS } from '../../protocol/runFolder';
import { type RunEvent, type TelemetryRow, checkRunEvent, checkTelemetryRow } from '../../protocol/telemetry';
import { attentionToWire } from '../../protocol/wire';
import { listCheckpoints } from '../checkpoint';
import { snapshotAttention, toMetricRow } from './toWire';
import { HealthMonitor } from '../telemetry/checks';
import { telemetryRow } from '../telemetry/telemetry';
import { type MetricsRow, RunDir } from './runDir';
import { checkRegularFile, FileRefused, readRegularFile } from '../io/regularFile';
import { readJsonFile } from '../io/json';
import type { Snapshot } from './snapshots';

/**
 * Complete lines of a file from where the last read stopped; `reset` when the file was rewritten. A
 * path that is there but not a regular file (a FIFO, a link to /dev/zero) is refused by name.
 */
export function newLines(path: string, from: FilePosition): { lines: string[]; at: FilePosition; reset: boolean } {
  if (!existsSync(path)) return { lines: [], at: { offset: 0, ino: 0 }, reset: from.offset > 0 };
  const { size, ino } = checkRegularFile(path, 'lines');
  const reset = from.offset > 0 && (ino !== from.ino || size < from.offset);
  const start = reset ? 0 : from.offset;
  const buf = readRegularFile(path, 'lines', start, size - start);
  const end = buf.lastIndexOf(0x0a);
  const text = end < 0 ? '' : buf.subarray(0, end + 1).toString('utf8');
  return { lines: text.split('\n').filter((l) => l.trim()), at: { offset: start + end + 1, ino }, reset };
}

/** Parses lines, keeping those `keep` maps to a value (a torn or malformed line is skipped). */
function parsed<T>(lines: string[], keep: (v: unknown) => T | null): T[] {
  const out: T[] = [];
  for (const line of lines) {
    try {
      const v = keep(JSON.parse(line));
      if (v !== null) out.push(v);
    } catch {
      // a line another writer tore: the rows around it still count
    }
  }
  return out;
}

const metricRow = (v: unknown): MetricRow | null => {
  const r = toMetricRow(v as MetricsRow);
  return r && !checkMetricRow(r, 'row') ? r : null;
};
const checked =
  <T>(check: (v: unknown, path: string) => string | undefined) =>
  (v: unknown): T | null =>
    check(v, 'row') ? null : (v as T);

/** The health checks of a folder without its own events, replayed as rows arrive (one per followed folder). */
const monitors = new Map<string, HealthMonitor>();

function findings(runDir: string, reset: boolean, rows: MetricRow[], telemetry: TelemetryRow[]): RunEvent[] {
  let monitor = monitors.get(runDir);
  if (!monitor || reset) monitors.set(runDir, (monitor = new HealthMonitor()));
  // In step order, each step's loss before its telemetry row, as training meets them.
  const byStep = [
    ...rows.map((r) => ({ step: r.step, order: 0, row: r })),
    ...telemetry.map((t) => ({ step: t.step, order: 1, row: t })),
  ].sort((a, b) => a.step - b.step || a.order - b.order);
  const out: RunEvent[] = [];
  for (const e of byStep) {
    const found =
      e.order === 0
        ? monitor.onStep(e.step, (e.row as MetricRow).loss, (e.row as MetricRow).gradNorm)
        : monitor.onTelemetry(e.row as TelemetryRow);
    out.push(...found.map((f) => ({ ...f, severity: 'warning' as const })));
  }
  return out;
}

/** The writer's activity: its end marker, or how long ago it last wrote while running. */
function activityOf(run: RunDir, now: number): Pick<RunPoll, 'activity' | 'state' | 'step' | 'lastWrite' | 'message'> {
  const times = [RUN_FILES.metrics, RUN_FILES.status, RUN_FILES.snapshots, RUN_FILES.checkpoints]
    .map((f) => join(run.path, f))
    .filter((p) => existsSync(p))
    .map((p) => statSync(p).mtimeMs);
  const lastWrite = Math.max(0, ...times);
  let status: { state?: unknown; step?: unknown; message?: unknown } = {};
  try {
    status = readJsonFile(run.statusPath) as typeof status;
  } catch (err) {
    // no status.json (a format-1 folder), or one being replaced: judge by the files' times; but a
    // status.json that is a FIFO, a device or a folder is refused by name
    if (err instanceof FileRefused && existsSync(run.statusPath)) throw err;
  }
  const state = RUN_STATES.find((s) => s === status.state) ?? null;
  const step = Number.isInteger(status.step) && (status.step as number) >= 0 ? (status.step as number) : null;
  const message = typeof status.message === 'string' ? { message: status.message } : {};
  const recent = now - lastWrite < STALLED_AFTER_MS;
  const activity: RunActivity =
    state === 'paused' || state === 'diverged'
      ? state
      : state && state !== 'running'
        ? 'finished'
        : recent
          ? 'live'
          : state === 'running'
            ? 'stalled'
            : 'finished';
  return { activity, state, step, lastWrite, ...message };
}

/** run/open's share of a first poll: what the folder holds so far, and where a follower goes on from. */
export function firstPoll(
  runDir: string,
): Pick<RunPoll, 'rows' | 'telemetry' | 'events' | 'checkpoints'> & { follow: FollowState } {
  const p = pollRun(runDir, FIRST_POLL, { withSnapshots: false });
  const follow: FollowState = {
    cursor: p.cursor,
    activity: p.activity,
    state: p.state,
    step: p.step,
    lastWrite: p.lastWrite,
    ...(p.message !== undefined ? { message: p.message } : {}),
  };
  return { rows: p.rows, telemetry: p.telemetry, events: p.events, checkpoints: p.checkpoints, follow };
}

/**
 * What `runDir` gained since `cursor` (FIRST_POLL: everything). `withSnapshots` false (run/open,
 * which sends snapshots through snapshots/get) reads snapshot files only where telemetry must be
 * computed from them, and sends none.
 */
export function pollRun(
  runDir: string,
  cursor: PollCursor = FIRST_POLL,
  { now = Date.now(), withSnapshots = true } = {},
): RunPoll {
  const run = new RunDir(runDir);
  if (!run.exists()) throw new Error(`${runDir}: not a run folder (no config.json)`);
  const paths: Record<FollowedFile, string> = {
    metrics: run.metricsPath,
    telemetry: run.telemetryPath,
    events: run.eventsPath,
  };
  const read = Object.fromEntries(
    (Object.keys(paths) as FollowedFile[]).map((f) => [f, newLines(paths[f], cursor.files[f])]),
  ) as Record<FollowedFile, ReturnType<typeof newLines>>;
  const reset = read.metrics.reset;
  const rows = parsed(read.metrics.lines, metricRow);
  const lastSnapshot = reset ? -1 : cursor.lastSnapshot;
  const fresh = run.snapshotSteps().filter((s) => s > lastSnapshot);
  const ownTelemetry = existsSync(paths.telemetry);
  const snaps: Snapshot[] = [];
  for (const step of withSnapshots || !ownTelemetry ? fresh : []) {
    try {
      snaps.push(run.readSnapshot(step));
    } catch (err) {
      if (err instanceof FileRefused && existsSync(err.path)) throw err; // a FIFO, a link to a device: never whole
      break; // not whole yet (a writer that does not rename into place): read again next time
    }
  }
  const telemetry = ownTelemetry
    ? parsed(read.telemetry.lines, checked<TelemetryRow>(checkTelemetryRow))
    : snaps.map((s) => telemetryRow(s.step, s.pairs)); // the statistics of stats.ts, no gradient norms
  const events = existsSync(paths.events)
    ? parsed(read.events.lines, checked<RunEvent>(checkRunEvent))
    : ownTelemetry
      ? []
      : findings(runDir, reset || cursor.lastSnapshot < 0, rows, telemetry);
  return {
    cursor: {
      files: { metrics: read.metrics.at, telemetry: read.telemetry.at, events: read.events.at },
      // The newest snapshot read (a torn one is read again), or, with none read, the newest there is.
      lastSnapshot: (snaps.length ? snaps[snaps.length - 1]!.step : fresh[fresh.length - 1]) ?? lastSnapshot,
    },
    reset,
    rows,
    snapshots: withSnapshots ? snaps.map((s) => attentionToWire(snapshotAttention(run, s))) : [],
    telemetry,
    events,
    checkpoints: listCheckpoints(runDir).map((c) => c.step),
    ...activityOf(run, now),
  };
}
