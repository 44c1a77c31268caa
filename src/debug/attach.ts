/**
 * Attach (issue 31, item 1): a run another process writes, or wrote — the engine's or one written
 * by PyTorch — followed through its logs (run/open, then run/poll each POLL_MS). Nothing here
 * trains: Continue, Step Over and Step Into move the step shown along the logged rows, stopping
 * where a `step N` breakpoint, a watch condition over a telemetry row or a health finding whose
 * filter is on holds, and wait for the writer when they reach its newest row.
 */
import { isAbsolute } from 'node:path';
import type { PollCursor } from '../protocol/follow';
import type { MetricRow } from '../protocol/metrics';
import { runOpen, runPoll } from '../protocol/methods';
import { describeFinding, type RunEvent, type TelemetryRow } from '../protocol/telemetry';
import type { RunSummary } from '../protocol/training';
import { HEAD_STATS } from '../engine/telemetry/telemetry';
import { parseWatch } from '../engine/telemetry/watch';
import { type FunctionBreakpoint, modelHeads } from './breakpoints';
import type { DebugEngine } from './engine';
import { watchMetrics } from './evaluate';

/** How often a followed run's folder is read for new rows. */
export const POLL_MS = 1000;

export interface AttachArgs {
  /** The run folder to follow (absolute). */
  runDir: string;
  /** A tfjs backend for the engine that reads it (and replays it on Step Back). */
  backend?: string;
}

/** The attach arguments as VS Code sends them, checked; throws naming the field that is wrong. */
export function checkAttachArgs(a: Record<string, unknown>): AttachArgs {
  if (typeof a['runDir'] !== 'string' || !isAbsolute(a['runDir']))
    throw new Error(`launch.json: "runDir" must be an absolute path, got ${JSON.stringify(a['runDir'])}`);
  if (a['backend'] !== undefined && typeof a['backend'] !== 'string')
    throw new Error(`launch.json: "backend" must be a backend name, got ${JSON.stringify(a['backend'])}`);
  return a as unknown as AttachArgs;
}

/** How a move along the logs goes: to the next breakpoint, the next step, or the next telemetry row. */
export type FollowMotion = 'continue' | 'next' | 'stepIn';

/** Where a move stops: the step, the stop's reason and description, the breakpoints that held. */
export interface FollowStop {
  step: number;
  reason: 'breakpoint' | 'exception' | 'step';
  description: string;
  ids: number[];
}

export class Follower {
  private constructor(
    private readonly engine: DebugEngine,
    readonly runDir: string,
    readonly summary: RunSummary,
    private rows: MetricRow[],
    private telemetry: TelemetryRow[],
    private events: RunEvent[],
    private cursor: PollCursor,
    /** The writer's state as the folder says it (live, paused, finished, …). */
    public activity: string,
  ) {}

  static async open(engine: DebugEngine, runDir: string): Promise<Follower> {
    const r = await engine.request(runOpen, { runDir });
    const { rows, telemetry, events, follow } = r;
    return new Follower(engine, runDir, r.summary, rows, telemetry, events, follow.cursor, follow.activity);
  }

  /** Reads what the writer added since the last read. */
  async poll(): Promise<void> {
    const p = await this.engine.request(runPoll, { runDir: this.runDir, ...this.cursor });
    if (p.reset) [this.rows, this.telemetry, this.events] = [[], [], []];
    this.rows.push(...p.rows);
    this.telemetry.push(...p.telemetry);
    this.events.push(...p.events);
    this.cursor = p.cursor;
    this.activity = p.activity;
  }

  /** The newest logged step (0 before the first). */
  get newest(): number {
    return this.rows.at(-1)?.step ?? 0;
  }

  /** Whether the writer is done: nothing more will be logged. */
  get done(): boolean {
    return this.activity === 'finished' || this.activity === 'diverged';
  }

  /** A logged step as the views show it: its metrics row, and the newest telemetry row up to it. */
  logged(step: number): { step: number; from: number; metrics?: MetricRow; telemetry?: TelemetryRow } {
    const metrics = this.rows.filter((m) => m.step === step).at(-1);
    const telemetry = this.telemetry.filter((t) => t.step <= step).at(-1);
    return { step, from: -1, ...(metrics ? { metrics } : {}), ...(telemetry ? { telemetry } : {}) };
  }

  /** The first logged step after `from` where `motion` stops; undefined while the logs hold none. */
  stopAfter(
    from: number,
    motion: FollowMotion,
    breakpoints: readonly FunctionBreakpoint[],
    filters: readonly string[],
  ): FollowStop | undefined {
    if (motion === 'next') {
      const step = this.rows.find((m) => m.step > from)?.step;
      return step === undefined ? undefined : { step, reason: 'step', description: `step ${step}`, ids: [] };
    }
    if (motion === 'stepIn') {
      const step = this.telemetry.find((t) => t.step > from)?.step;
      return step === undefined ? undefined : { step, reason: 'step', description: `step ${step}`, ids: [] };
    }
    const heads = modelHeads(this.summary);
    const watches = breakpoints.flatMap((b) => {
      if (!('watch' in b)) return [];
      try {
        return [{ b, w: parseWatch(b.watch, heads, HEAD_STATS) }];
      } catch {
        return []; // not of this model's heads: the breakpoint says so where it was set
      }
    });
    const metrics = new Map(this.rows.map((m) => [m.step, m]));
    const stops: FollowStop[] = [];
    for (const b of breakpoints)
      if ('step' in b && b.step > from && metrics.has(b.step))
        stops.push({ step: b.step, reason: 'breakpoint', description: `step ${b.step}`, ids: [b.id] });
    for (const row of this.telemetry) {
      if (row.step <= from) continue;
      const held = watches.flatMap(({ b, w }) => {
        const r = w.evaluate(row, watchMetrics(row.step, metrics.get(row.step)));
        return r.hit ? [{ id: b.id, text: `watch "${b.watch}" holds for ${r.heads.join(', ') || 'the run'}` }] : [];
      });
      if (held.length) {
        const description = `step ${row.step} · ${held.map((h) => h.text).join('; ')}`;
        stops.push({ step: row.step, reason: 'breakpoint', description, ids: held.map((h) => h.id) });
      }
    }
    for (const e of this.events)
      if (e.step > from && filters.includes(e.check))
        stops.push({ step: e.step, reason: 'exception', description: describeFinding(e), ids: [] });
    return stops.sort((a, b) => a.step - b.step)[0];
  }
}
