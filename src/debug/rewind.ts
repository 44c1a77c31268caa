/**
 * Step Back and Reverse Continue (issue 31, item 4): a step before the live run's is shown as the
 * engine replays it (train/replay: from the newest checkpoint before it, bit for bit what the run
 * computed, the run folder unchanged); where Reverse Continue (and Continue among replayed steps)
 * stops is read from the run's logs (run/open): the steps where a `step N` breakpoint, a watch
 * condition over a logged telemetry row, or a health check whose filter is on held. A replay's rows
 * answer the Step Backs that follow it within its checkpoint's span without another replay.
 */
import type { MetricRow } from '../protocol/metrics';
import { runOpen, trainReplay } from '../protocol/methods';
import type { TelemetryRow } from '../protocol/telemetry';
import { HEAD_STATS } from '../engine/telemetry/telemetry';
import { parseWatch } from '../engine/telemetry/watch';
import { type FunctionBreakpoint, type ModelShape, modelHeads } from './breakpoints';
import type { DebugEngine } from './engine';
import { watchMetrics } from './evaluate';

/** A replayed step as the views show it. */
export interface Replayed {
  step: number;
  /** The checkpoint the replay started from (0: the run's seeded start). */
  from: number;
  /** The backend that replayed, when it promises float tolerance rather than bit for bit (a GPU). */
  approximate?: string;
  metrics?: MetricRow;
  /** The replay's newest telemetry row, else the newest the run logged at or before the step. */
  telemetry?: TelemetryRow;
}

/**
 * `step 149 (replayed from checkpoint 100)`: the stopped event's description; on a GPU it says the
 * replay equals the run within float tolerance, not bit for bit.
 */
export const replayedDescription = (r: Replayed): string =>
  `step ${r.step} (replayed from ${r.from ? `checkpoint ${r.from}` : 'the seeded start, step 0'}` +
  `${r.approximate ? ` on ${r.approximate}: equal to the run within float tolerance, not bit for bit` : ''})`;

/** A replay's rows: every step from `from` + 1 to `to`, as the replay computed them. */
interface ReplayedRows {
  from: number;
  approximate?: string;
  to: number;
  rows: MetricRow[];
  telemetry: TelemetryRow[];
}

/**
 * Replays one run's steps for the session. A replay to step s computes every step between its
 * checkpoint and s, so the rows it returns answer a later Step Back to any of those steps at once:
 * they are what a replay to that step computes (the same batches, dropout draws and arithmetic).
 */
export class Rewinder {
  private last?: ReplayedRows;

  constructor(
    private readonly engine: DebugEngine,
    private readonly runDir: string,
  ) {}

  /** Step `step` replayed (throws the engine's reason: a PyTorch run, no checkpoint before it, …). */
  async replay(step: number): Promise<Replayed> {
    const last = this.last;
    const known = last && last.from < step && step <= last.to ? last : await this.replayTo(step);
    const metrics = known.rows.find((m) => m.step === step);
    let telemetry = known.telemetry.filter((t) => t.step <= step).at(-1);
    if (!telemetry) {
      const logged = await this.engine.request(runOpen, { runDir: this.runDir });
      telemetry = logged.telemetry.filter((t) => t.step <= step).at(-1);
    }
    const approximate = known.approximate ? { approximate: known.approximate } : {};
    return {
      step,
      from: known.from,
      ...approximate,
      ...(metrics ? { metrics } : {}),
      ...(telemetry ? { telemetry } : {}),
    };
  }

  private async replayTo(step: number): Promise<ReplayedRows> {
    const r = await this.engine.request(trainReplay, { runDir: this.runDir, step });
    this.last = { from: r.from, to: step, rows: r.rows, telemetry: r.telemetry };
    if (!r.exact) this.last.approximate = r.backend;
    return this.last;
  }
}

/** The run's checkpoints, and the logged steps where an active breakpoint held, ascending. */
export async function breakpointSteps(
  engine: DebugEngine,
  runDir: string,
  breakpoints: readonly FunctionBreakpoint[],
  filters: readonly string[],
  model: ModelShape,
): Promise<{ steps: number[]; checkpoints: number[] }> {
  const logs = await engine.request(runOpen, { runDir });
  const steps = new Set(breakpoints.flatMap((b) => ('step' in b ? [b.step] : [])));
  const watches = breakpoints.flatMap((b) =>
    'watch' in b ? [parseWatch(b.watch, modelHeads(model), HEAD_STATS)] : [],
  );
  const metrics = new Map(logs.rows.map((m) => [m.step, m]));
  for (const row of logs.telemetry)
    if (watches.some((w) => w.evaluate(row, watchMetrics(row.step, metrics.get(row.step))).hit)) steps.add(row.step);
  for (const e of logs.events) if (filters.includes(e.check)) steps.add(e.step);
  return { steps: [...steps].sort((a, b) => a - b), checkpoints: logs.summary.checkpoints };
}
