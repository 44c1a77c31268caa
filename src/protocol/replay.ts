/**
 * train/replay on the engine ↔ extension wire (issue 31): a run's step computed again, exactly, from
 * the newest checkpoint before it (the engine's train/replay.ts), without a change to the run folder.
 * What the debug adapter's Step Back and Reverse Continue show.
 */
import { arrayOf, type Check, intIn, isAbsolutePath, isBoolean, isIndex, isString, object, optional } from './check';
import { checkMetricRow, type MetricRow } from './metrics';
import { checkTelemetryRow, type TelemetryRow } from './telemetry';
import { TRAIN_LIMITS } from './training';
import { checkWireAttention, type WireAttention } from './wire';

export interface ReplayParams {
  runDir: string;
  /** The step to replay to (at most the run's newest checkpoint). */
  step: number;
}
export const checkReplayParams: Check<ReplayParams> = object({
  runDir: isAbsolutePath,
  step: intIn(1, TRAIN_LIMITS.steps),
});

export interface Replay {
  runDir: string;
  step: number;
  /** The checkpoint the replay started from (0: the run's seeded start). */
  from: number;
  /** The metrics rows of steps from + 1 … step (those with a finite loss). */
  rows: MetricRow[];
  /** The telemetry rows of those steps. */
  telemetry: TelemetryRow[];
  /** The probe's attention at `step`, when it is a snapshot step. */
  snapshot?: WireAttention;
  /** sha256 of the weights after `step` (the engine's weightsHash). */
  weightsHash: string;
  /** The backend that replayed; `exact`: bit for bit (wasm, cpu), else equal within float tolerance (a GPU). */
  backend: string;
  exact: boolean;
}
export const checkReplay: Check<Replay> = object({
  runDir: isString,
  step: isIndex,
  from: isIndex,
  rows: arrayOf(checkMetricRow),
  telemetry: arrayOf(checkTelemetryRow),
  snapshot: optional(checkWireAttention),
  weightsHash: isString,
  backend: isString,
  exact: isBoolean,
});
