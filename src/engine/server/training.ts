/**
 * The engine's training service: one run at a time in this process, started by train/start or
 * train/resume, stopped by train/stop, streamed to the client as train/metrics, train/snapshot and
 * train/ended notifications.
 */
import { ErrorCodes, type MessageConnection, ResponseError } from 'vscode-jsonrpc/node';
import type { EngineLog } from '../../protocol/engine';
import type { MetricRow } from '../../protocol/metrics';
import { ENGINE_ERROR, type RunSummary } from '../../protocol/training';
import {
  trainEnded,
  trainEvent,
  trainFork,
  trainMetrics,
  trainReplay,
  trainResume,
  trainSnapshot,
  trainStart,
  trainStop,
  trainTelemetry,
} from '../../protocol/methods';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';
import { attentionToWire } from '../../protocol/wire';
import { taskSpec, type DataSpec } from '../data/dataset';
import { openRun, type OpenRun, prepareRun } from '../run/setup';
import { startTrainer } from '../train/start';
import { createFork, type ForkChanges } from '../run/fork';
import { replay } from '../train/replay';
import type { Trainer } from '../train/trainer';
import { runSummary } from './convert';
import { toMetricRow } from '../run/toWire';
import { handle, notify } from './rpc';
import type { TransformerConfig } from '../model/config';
import { attentionLayers } from '../model/headParams';
import { HEAD_STATS, headIds } from '../telemetry/telemetry';
import { parseWatches } from '../telemetry/watch';

interface Active {
  trainer: Trainer;
  opened: OpenRun;
  done: Promise<void>;
}

/** JSON has no NaN or ∞: a non-finite figure travels as null (telemetry) or is left out (an event's value). */
function finiteRow(row: TelemetryRow): TelemetryRow {
  const stats = Object.fromEntries(
    Object.entries(row.stats).map(([k, xs]) => [k, xs.map((x) => (x === null || Number.isFinite(x) ? x : null))]),
  );
  return { ...row, stats };
}
function finiteEvent(e: RunEvent): RunEvent {
  if (e.value === undefined || Number.isFinite(e.value)) return e;
  const { value, ...rest } = e;
  void value;
  return rest;
}

/**
 * A request's watch conditions parsed where they enter the engine, against the run's model: a bad one
 * is refused as invalid params naming its index and column, before anything is written.
 */
function checkWatchParams(method: string, sources: readonly string[] | undefined, config: TransformerConfig): void {
  try {
    parseWatches(sources ?? [], headIds(attentionLayers(config), config.heads), HEAD_STATS, `${method} params.watch`);
  } catch (err) {
    throw new ResponseError(ErrorCodes.InvalidParams, (err as Error).message);
  }
}

/** Metrics go out in batches at most this often (and at once with validation figures). */
const FLUSH_MS = 200;

export class TrainingService {
  private active: Active | null = null;
  /** Set from the moment a start is accepted until it is active or has failed: no second start slips in. */
  private starting = false;

  constructor(
    private readonly conn: MessageConnection,
    private readonly ensureBackend: () => Promise<string>,
    private readonly log: (level: EngineLog['level'], message: string) => void,
  ) {
    handle(conn, trainStart, (p) =>
      this.exclusive(() => {
        const data: DataSpec = p.data.kind === 'task' ? taskSpec(p.data.task) : p.data;
        const overrides = {
          ...(p.steps !== undefined ? { steps: p.steps } : {}),
          ...(p.warmup !== undefined ? { warmup: p.warmup } : {}),
          ...(p.lrFactor !== undefined ? { lr_factor: p.lrFactor } : {}),
          ...(p.batchTokens !== undefined ? { batch_tokens: p.batchTokens } : {}),
          ...(p.snapshotEvery !== undefined ? { snapshot_every: p.snapshotEvery } : {}),
          ...(p.checks !== undefined ? { checks: p.checks } : {}),
          ...(p.watch !== undefined ? { watch: p.watch } : {}),
        };
        // createRun, with the conditions parsed against the model before the folder is made
        const opened = prepareRun({ out: p.runDir, data, config: p.config, overrides });
        checkWatchParams(trainStart.method, p.watch, opened.config);
        opened.commit();
        return this.begin(opened, false);
      }),
    );
    handle(conn, trainResume, (p) =>
      this.exclusive(() => {
        const overrides = {
          ...(p.steps ? { steps: p.steps } : {}),
          ...(p.checks ? { checks: p.checks } : {}),
          ...(p.watch ? { watch: p.watch } : {}),
        };
        const opened = openRun(p.runDir, overrides);
        checkWatchParams(trainResume.method, p.watch, opened.config);
        const done = opened.run.newestCheckpointStep();
        if (done !== undefined && done >= opened.settings.steps)
          throw new ResponseError(
            ENGINE_ERROR.runFinished,
            `${opened.run.path} already finished: it is at step ${done} of ${opened.settings.steps}. ` +
              'To train more, resume it with a larger step budget.',
            { step: done, steps: opened.settings.steps },
          );
        return this.begin(opened, true);
      }),
    );
    handle(conn, trainFork, (p) =>
      this.exclusive(() => {
        const changes: ForkChanges = {
          ...(p.freezeHeads ? { freeze_heads: p.freezeHeads } : {}),
          ...(p.maskHeads ? { mask_heads: p.maskHeads } : {}),
          ...(p.reinitHeads ? { reinit_heads: p.reinitHeads } : {}),
          ...(p.steps !== undefined ? { steps: p.steps } : {}),
          ...(p.lrFactor !== undefined ? { lr_factor: p.lrFactor } : {}),
          ...(p.warmup !== undefined ? { warmup: p.warmup } : {}),
          ...(p.dropout !== undefined ? { dropout: p.dropout } : {}),
          ...(p.labelSmoothing !== undefined ? { label_smoothing: p.labelSmoothing } : {}),
        };
        createFork({ parent: p.parent, step: p.step, out: p.runDir, changes });
        return this.begin(openRun(p.runDir), true);
      }),
    );
    handle(conn, trainReplay, (p) =>
      this.exclusive(async () => {
        const r = await replay(p.runDir, p.step);
        return {
          runDir: p.runDir,
          step: r.step,
          from: r.from,
          rows: r.rows.flatMap((row) => toMetricRow(row) ?? []),
          telemetry: r.telemetry.map(finiteRow),
          ...(r.snapshot ? { snapshot: attentionToWire(r.snapshot) } : {}),
          weightsHash: r.weightsHash,
          backend: r.backend,
          exact: r.exact,
        };
      }),
    );
    handle(conn, trainStop, async () => {
      const a = this.active;
      if (!a) return null;
      a.trainer.stop();
      await a.done;
      return { step: a.trainer.currentStep, runDir: a.opened.run.path };
    });
  }

  /** The run folder that trains now, if any. */
  get runDir(): string | undefined {
    return this.active?.opened.run.path;
  }

  /** Stops a running training with a checkpoint (the client went away). */
  async shutdown(): Promise<void> {
    const a = this.active;
    if (!a) return;
    a.trainer.stop();
    await a.done;
  }

  /** Runs a start (or a replay, to its end) when no run trains or starts; the check and the claim happen before any await. */
  private async exclusive<T>(start: () => T | Promise<T>): Promise<T> {
    const busy = this.active?.opened.run.path ?? (this.starting ? 'another run, starting' : undefined);
    if (busy) throw new Error(`a run is already training (${busy}); stop it first`);
    this.starting = true;
    try {
      await this.ensureBackend();
      return await start();
    } finally {
      this.starting = false;
    }
  }

  /** Starts the loop without awaiting it. */
  private begin(opened: OpenRun, resume: boolean): RunSummary {
    const { trainer, from, warnings } = startTrainer(opened, {
      resume,
      command: `serve (the extension's engine), train/${resume ? 'resume' : 'start'}`,
    });
    const runDir = opened.run.path;
    for (const warning of warnings) this.log('warn', warning);
    let pending: MetricRow[] = [];
    let lastFlush = 0;
    const flush = (): void => {
      if (pending.length) notify(this.conn, trainMetrics, { runDir, rows: pending });
      pending = [];
      lastFlush = Date.now();
    };
    const done = trainer
      .train({
        onStep: (row) => {
          const m = toMetricRow(row);
          if (m) pending.push(m);
          if (Date.now() - lastFlush > FLUSH_MS || row.val_loss !== undefined) flush();
        },
        onSnapshot: (attention) => notify(this.conn, trainSnapshot, { runDir, attention: attentionToWire(attention) }),
        onTelemetry: (row) => notify(this.conn, trainTelemetry, { runDir, row: finiteRow(row) }),
        onFinding: (event) => {
          flush();
          notify(this.conn, trainEvent, { runDir, event: finiteEvent(event) });
        },
      })
      .then(
        (step) => {
          flush();
          const paused = trainer.breakpoint;
          if (paused) {
            notify(this.conn, trainEnded, {
              runDir,
              step,
              reason: 'paused',
              message: paused.message,
              event: finiteEvent(paused),
            });
            return;
          }
          const diverged = trainer.diverged;
          if (diverged) {
            const event = finiteEvent(diverged);
            notify(this.conn, trainEnded, { runDir, step, reason: 'diverged', message: diverged.message, event });
            return;
          }
          const reason = step >= opened.settings.steps ? 'completed' : 'stopped';
          notify(this.conn, trainEnded, { runDir, step, reason });
        },
        (err: Error) => {
          flush();
          this.log('error', `training ${runDir} failed: ${err.message}`);
          notify(this.conn, trainEnded, { runDir, step: trainer.currentStep, reason: 'failed', message: err.message });
        },
      )
      .finally(() => {
        trainer.dispose();
        this.active = null;
      });
    this.active = { trainer, opened, done };
    this.log('info', `${resume ? `resuming ${runDir} at step ${from}` : `training ${runDir}`}: ${opened.data.summary}`);
    return runSummary(opened.run, opened.config, opened.settings, opened.dataSpec, from, true);
  }
}
