/**
 * Following a run folder that another process writes (a PyTorch RunWriter, another window's
 * engine): `run/poll` (methods.ts) returns what landed since the last poll. The extension polls on file-watcher
 * events, and on a timer as the fallback; the engine reads the files, where they are.
 */
import {
  type Check,
  type Fields,
  isAbsolutePath,
  arrayOf,
  intIn,
  isBoolean,
  isFiniteNumber,
  isIndex,
  isString,
  nullable,
  object,
  oneOf,
  optional,
} from './check';
import { type MetricRow, checkMetricRow } from './metrics';
import { RUN_ACTIVITIES, type RunActivity } from './runFolder';
import { type RunEvent, type TelemetryRow, checkRunEvent, checkTelemetryRow } from './telemetry';
import { type WireAttention, checkWireAttention } from './wire';

/** The JSON-lines files a poll reads on from where it stopped. */
export const FOLLOWED_FILES = ['metrics', 'telemetry', 'events'] as const;
export type FollowedFile = (typeof FOLLOWED_FILES)[number];

/** Where a poll stopped in one file: bytes read (complete lines), and the file's inode (a rewrite changes it). */
export interface FilePosition {
  offset: number;
  ino: number;
}

/** Where the last poll stopped reading: each JSON-lines file, and the newest snapshot seen. */
export interface PollCursor {
  files: Record<FollowedFile, FilePosition>;
  /** Newest snapshot step already sent (-1: none). */
  lastSnapshot: number;
}

export interface PollParams extends PollCursor {
  runDir: string;
}

/** Where a follower stands: its cursor, and what the folder says of its writer. */
export interface FollowState {
  cursor: PollCursor;
  activity: RunActivity;
  /** The status file's state and step (null without one), and when the folder was last written (ms since 1970). */
  state: string | null;
  step: number | null;
  lastWrite: number;
  /** The writer's message (a failure's reason). */
  message?: string;
}

export interface RunPoll extends FollowState {
  /** metrics.jsonl was rewritten (a resume truncated it): `rows`, `telemetry` and `events` start over. */
  reset: boolean;
  /** Complete new lines only: a partial last line is read again at the next poll. */
  rows: MetricRow[];
  /** New probe snapshots, oldest first. */
  snapshots: WireAttention[];
  /** New per-head rows: telemetry.jsonl's, or computed from the new snapshots where it has none. */
  telemetry: TelemetryRow[];
  /** New findings: events.jsonl's, or the health checks run here on the rows above where it has none. */
  events: RunEvent[];
  checkpoints: number[];
}

const checkPosition = object<FilePosition>({ offset: isIndex, ino: isIndex });
const cursorFields: Fields<PollCursor> = {
  // One check a file, in FOLLOWED_FILES's order.
  files: object({ metrics: checkPosition, telemetry: checkPosition, events: checkPosition }),
  lastSnapshot: intIn(-1, Number.MAX_SAFE_INTEGER),
};

const followFields: Fields<FollowState> = {
  cursor: object(cursorFields),
  activity: oneOf(RUN_ACTIVITIES),
  state: nullable(isString),
  step: nullable(isIndex),
  lastWrite: isFiniteNumber,
  message: optional(isString),
};
export const checkFollowState: Check<FollowState> = object(followFields);

export const checkPollParams: Check<PollParams> = object({ runDir: isAbsolutePath, ...cursorFields });
export const checkRunPoll: Check<RunPoll> = object({
  ...followFields,
  reset: isBoolean,
  rows: arrayOf(checkMetricRow),
  snapshots: arrayOf(checkWireAttention),
  telemetry: arrayOf(checkTelemetryRow),
  events: arrayOf(checkRunEvent),
  checkpoints: arrayOf(isIndex),
});

/** The cursor of a first poll: everything in the folder is new. */
export const FIRST_POLL: PollCursor = {
  files: { metrics: { offset: 0, ino: 0 }, telemetry: { offset: 0, ino: 0 }, events: { offset: 0, ino: 0 } },
  lastSnapshot: -1,
};
