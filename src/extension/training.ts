/**
 * The live run, as the extension sees it: which run trains, its last logged step, the status bar
 * item, the context keys the command table's `when` clauses read, and the one rule that makes an
 * engine crash harmless: when the engine dies while a run trains, the client restarts it and this
 * resumes the run (train/resume) from its last checkpoint as soon as the new engine is up.
 * It knows nothing of panels: the Viewer listens to its events.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Attention } from '../protocol/attention';
import type { MetricRow } from '../protocol/metrics';
import { DEBUG_TYPE } from '../protocol/debugEvents';
import { type ResumeParams, type RunSummary, type TrainParams } from '../protocol/training';
import {
  trainEnded,
  trainEvent,
  trainFork,
  trainMetrics,
  trainResume,
  trainSnapshot,
  trainStart,
  trainStop,
  trainTelemetry,
} from '../protocol/methods';
import { type RunEvent, type TelemetryRow } from '../protocol/telemetry';
import type { Schedule } from '../protocol/webview';
import { attentionFromWire, type WireAttention } from '../protocol/wire';
import type { ForkParams } from '../protocol/fork';
import { STATE_ICONS, STATE_LABELS } from './runState';
import { showEndNotice, type TrainEnd } from './trainingNotices';
import type { EngineClient } from './engineClient';

export const CTX_TRAINING = 'attentionDebugger.training';
export const CTX_HAS_RUN = 'attentionDebugger.hasRun';
/** A run folder was opened (Open Run, Follow Run Folder): the walkthrough's "Open a run folder" step completes on it. */
export const CTX_RUN_OPENED = 'attentionDebugger.runOpened';

export type { TrainEnd } from './trainingNotices';
export interface TrainResumed {
  runDir: string;
  /** The step the run went on from (its newest checkpoint). */
  step: number;
  /** Why: the engine died (crash) or the user asked (command). */
  cause: 'crash' | 'command';
}

/** The schedule the dashboard draws, from a run summary. */
export function scheduleOf(summary: RunSummary): Schedule {
  return {
    totalSteps: Math.max(1, summary.totalSteps),
    warmupSteps: summary.warmupSteps,
    dModel: Math.max(1, summary.dModel),
    points: summary.schedule,
  };
}

export class TrainingSession implements vscode.Disposable {
  private readonly subs: vscode.Disposable[] = [];
  private readonly status: vscode.StatusBarItem;
  private statusShown = false;
  /** The run that trains now (or was training when the engine died). */
  private active: { runDir: string; totalSteps: number } | undefined;
  private interrupted = false;
  /** train/ended notifications that overtook the answer to their own train/resume (a run that ends at once). */
  private readonly endedEarly = new Map<string, TrainEnd>();

  /** The live run's summary (train/start or train/resume), kept after it ends. */
  summary: RunSummary | undefined;
  /** The last metrics row of the live run, with the run it belongs to. */
  private last: { runDir: string; row: MetricRow } | undefined;
  /** Its last row with a validation score (valLoss or valBleu): most rows have none. */
  private lastValidated: { runDir: string; row: MetricRow } | undefined;
  /** The newest probe snapshot of the live run. */
  lastSnapshot: Attention | undefined;

  private readonly startEmitter = new vscode.EventEmitter<{ summary: RunSummary; fresh: boolean }>();
  private readonly metricsEmitter = new vscode.EventEmitter<{ runDir: string; rows: MetricRow[] }>();
  private readonly snapshotEmitter = new vscode.EventEmitter<{ runDir: string; attention: Attention }>();
  private readonly telemetryEmitter = new vscode.EventEmitter<{ runDir: string; row: TelemetryRow }>();
  private readonly eventEmitter = new vscode.EventEmitter<{ runDir: string; event: RunEvent }>();
  private readonly endEmitter = new vscode.EventEmitter<TrainEnd>();
  private readonly resumeEmitter = new vscode.EventEmitter<TrainResumed>();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  /** A run started or went on (train/start, train/resume). */
  readonly onDidStart = this.startEmitter.event;
  readonly onDidMetrics = this.metricsEmitter.event;
  readonly onDidSnapshot = this.snapshotEmitter.event;
  readonly onDidTelemetry = this.telemetryEmitter.event;
  /** A health check fired during the live run (warnings; a breakpoint also ends the run, `paused`). */
  readonly onDidFinding = this.eventEmitter.event;
  /** The breakpoint that paused the last run, if one did (for the notification's actions and the tests). */
  lastBreakpoint: (RunEvent & { runDir: string }) | undefined;
  /** How the last run ended (the Current Run view's state once it is over). */
  lastEnd: TrainEnd | undefined;
  readonly onDidEnd = this.endEmitter.event;
  readonly onDidResume = this.resumeEmitter.event;
  /** Anything the Current Run view shows changed. */
  readonly onDidChange = this.changeEmitter.event;

  /**
   * The debug sessions of the attention-debugger type running: each trains in an engine of its own,
   * so beside one the item hides the last run's end, which is not the run being debugged.
   */
  private readonly debugging = new Set<string>();

  constructor(
    private readonly engine: EngineClient,
    private readonly log: (line: string) => void,
  ) {
    this.status = vscode.window.createStatusBarItem('attentionDebugger.training', vscode.StatusBarAlignment.Left, 10);
    this.status.name = 'Attention Debugger Training';
    this.status.command = 'attentionDebugger.trainingActions';
    this.subs.push(
      this.status,
      this.startEmitter,
      this.metricsEmitter,
      this.snapshotEmitter,
      this.telemetryEmitter,
      this.eventEmitter,
      this.endEmitter,
      this.resumeEmitter,
      this.changeEmitter,
      engine.onNotification(trainMetrics, (p) => this.onMetrics(p.runDir, p.rows)),
      engine.onNotification(trainSnapshot, (p) => this.onSnapshot(p.runDir, p.attention)),
      engine.onNotification(trainEnded, (p) => this.onEnded(p)),
      engine.onNotification(trainTelemetry, (p) => {
        if (this.isLive(p.runDir, 'train/telemetry')) this.telemetryEmitter.fire(p);
      }),
      engine.onNotification(trainEvent, (p) => {
        if (!this.isLive(p.runDir, 'train/event')) return;
        this.log(`[${p.event.check}] step ${p.event.step}: ${p.event.message}`);
        this.eventEmitter.fire(p);
      }),
      engine.onDidExit((e) => {
        if (!this.active || e.restartInMs === undefined) return;
        this.interrupted = true;
        const name = path.basename(this.active.runDir);
        this.log(`the engine died while ${this.active.runDir} was training; it resumes once the engine is back`);
        void vscode.window.showWarningMessage(
          `Attention Debugger: the engine stopped while training ${name}. ` +
            'Restarting it and resuming from the last checkpoint…',
        );
        this.updateStatus();
      }),
      engine.onDidStart(() => {
        if (this.active && this.interrupted) void this.resumeAfterCrash(this.active.runDir);
      }),
      vscode.debug.onDidStartDebugSession((session) => {
        if (session.type !== DEBUG_TYPE) return;
        this.debugging.add(session.id);
        this.updateStatus();
      }),
      vscode.debug.onDidTerminateDebugSession((session) => {
        if (this.debugging.delete(session.id)) this.updateStatus();
      }),
    );
    void this.setContext();
  }

  get runDir(): string | undefined {
    return this.active?.runDir;
  }
  get training(): boolean {
    return this.active !== undefined;
  }
  /** The last logged step of the live run (undefined before its first step), or of the run that ended last. */
  get lastRow(): MetricRow | undefined {
    return this.ofShownRun(this.last);
  }
  /** The last row with a validation score of the run lastRow belongs to. */
  get lastValidatedRow(): MetricRow | undefined {
    return this.ofShownRun(this.lastValidated);
  }
  private ofShownRun(r: { runDir: string; row: MetricRow } | undefined): MetricRow | undefined {
    return r && r.runDir === (this.active?.runDir ?? this.summary?.runDir) ? r.row : undefined;
  }

  /** What the status bar item shows now, undefined while it is hidden (for the tests). */
  get statusText(): string | undefined {
    return this.statusShown ? this.status.text : undefined;
  }

  /** Starts a new run; resolves with its summary once the engine accepted it. */
  start(params: TrainParams): Promise<RunSummary> {
    return this.launch(params.runDir, () => this.engine.request(trainStart, params));
  }

  /** Starts a fork of a run's checkpoint (a new run folder); resolves once the engine accepted it. */
  fork(params: ForkParams): Promise<RunSummary> {
    return this.launch(params.runDir, () => this.engine.request(trainFork, params));
  }

  private async launch(runDir: string, request: () => Promise<RunSummary>): Promise<RunSummary> {
    const busy = this.active?.runDir ?? this.starting;
    if (busy) throw new Error(`a run is already training (${busy}); stop it first`);
    // Set before the first await: a second Train while the engine loads its backend is refused here too.
    this.starting = runDir;
    try {
      const summary = await request();
      this.begin(summary, true);
      return summary;
    } finally {
      this.starting = undefined;
    }
  }

  /** The run folder of a start the engine has not answered yet. */
  private starting: string | undefined;

  /** Goes on training a run from its newest checkpoint (`steps`: a new step budget; `checks`: health checks switched). */
  async resume(runDir: string, steps?: number, checks?: ResumeParams['checks']): Promise<RunSummary> {
    if (this.active && this.active.runDir !== runDir)
      throw new Error(`a run is already training (${this.active.runDir}); stop it first`);
    this.endedEarly.delete(runDir);
    const summary = await this.engine.request(trainResume, {
      runDir,
      ...(steps !== undefined ? { steps } : {}),
      ...(checks ? { checks } : {}),
    });
    this.begin(summary, false);
    this.resumeEmitter.fire({ runDir: summary.runDir, step: summary.step, cause: 'command' });
    return summary;
  }

  /** The run that stop() was asked to stop: the Stop command says where it stopped, not a notification. */
  private stopping: string | undefined;

  /** Asks the engine to stop after the step in progress (with a checkpoint). */
  async stop(): Promise<{ step: number; runDir: string } | null> {
    this.stopping = this.active?.runDir;
    const result = await this.engine.request(trainStop);
    if (result && this.active?.runDir === result.runDir)
      this.finish({ runDir: result.runDir, step: result.step, reason: 'stopped' });
    else if (!result && this.active && !this.interrupted)
      this.finish({ runDir: this.active.runDir, step: this.lastRow?.step ?? 0, reason: 'stopped' });
    return result;
  }

  private begin(summary: RunSummary, fresh: boolean): void {
    this.summary = summary;
    this.active = { runDir: summary.runDir, totalSteps: summary.totalSteps };
    this.interrupted = false;
    this.last = undefined;
    if (fresh) this.lastSnapshot = this.lastValidated = undefined;
    this.log(`${fresh ? 'training' : 'resumed'} ${summary.runDir} at step ${summary.step} of ${summary.totalSteps}`);
    this.updateStatus();
    void this.setContext();
    this.startEmitter.fire({ summary, fresh });
    this.changeEmitter.fire();
    const early = this.endedEarly.get(summary.runDir);
    this.endedEarly.delete(summary.runDir);
    if (early) this.finish(early);
  }

  private async resumeAfterCrash(runDir: string): Promise<void> {
    try {
      const summary = await this.engine.request(trainResume, { runDir });
      this.begin(summary, false);
      this.log(`resumed ${runDir} after the engine restart, from step ${summary.step}`);
      void vscode.window.showInformationMessage(
        `Attention Debugger: the engine is back; ${path.basename(runDir)} resumed from step ${summary.step}.`,
      );
      this.resumeEmitter.fire({ runDir, step: summary.step, cause: 'crash' });
    } catch (err) {
      if (!this.interrupted) return; // the engine died again: the next start retries
      this.log(`could not resume ${runDir} after the engine restart: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(
        `Attention Debugger: could not resume ${path.basename(runDir)}: ${(err as Error).message}`,
      );
      this.finish({ runDir, step: this.lastRow?.step ?? 0, reason: 'failed', message: (err as Error).message });
    }
  }

  /** Notifications of a run other than the live one are dropped (and logged). */
  private isLive(runDir: string, what: string): boolean {
    if (!this.active || runDir === this.active.runDir) return true;
    this.log(`${what} for ${runDir} ignored: ${this.active.runDir} is the live run`);
    return false;
  }

  private onMetrics(runDir: string, rows: MetricRow[]): void {
    if (rows.length === 0 || !this.isLive(runDir, 'train/metrics')) return;
    this.last = { runDir, row: rows[rows.length - 1]! };
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      if (row.valLoss === undefined && row.valBleu === undefined) continue;
      this.lastValidated = { runDir, row };
      break;
    }
    this.updateStatus();
    this.metricsEmitter.fire({ runDir, rows });
    this.changeEmitter.fire();
  }

  private onSnapshot(runDir: string, wire: WireAttention): void {
    if (!this.isLive(runDir, 'train/snapshot')) return;
    let attention: Attention;
    try {
      attention = attentionFromWire(wire, 'train/snapshot attention');
    } catch (err) {
      this.log(`malformed train/snapshot ignored: ${(err as Error).message}`);
      return;
    }
    this.lastSnapshot = attention;
    this.snapshotEmitter.fire({ runDir, attention });
  }

  private onEnded(e: TrainEnd): void {
    if (!this.active) {
      // It may have overtaken the answer to the train/resume that started it: begin() finishes it.
      this.endedEarly.set(e.runDir, e);
      return;
    }
    if (e.runDir !== this.active.runDir) {
      this.log(`train/ended for ${e.runDir} ignored: ${this.active.runDir} is the live run`);
      return;
    }
    this.finish(e);
  }

  /** The run is over (once per run: train/stop's answer and train/ended may both report it). */
  private finish(e: TrainEnd): void {
    if (!this.active) return;
    this.active = undefined;
    this.interrupted = false;
    if (this.summary?.runDir === e.runDir) this.summary = { ...this.summary, step: e.step, running: false };
    this.lastEnd = e;
    this.updateStatus();
    void this.setContext();
    this.log(`training of ${e.runDir} ${e.reason} at step ${e.step}${e.message ? `: ${e.message}` : ''}`);
    if (e.reason === 'paused' && e.event) this.lastBreakpoint = { ...e.event, runDir: e.runDir };
    if (e.reason === 'stopped' && this.stopping === e.runDir) this.stopping = undefined;
    else showEndNotice(e);
    this.endEmitter.fire(e);
    this.changeEmitter.fire();
  }

  /** Progress lives in the status bar (a notification would cover the editor for the whole run). */
  private updateStatus(): void {
    if (!this.active) {
      this.showEnd();
      return;
    }
    const r = this.lastRow;
    const step = r?.step ?? this.summary?.step ?? 0;
    const total = this.active.totalSteps;
    const pct = total > 0 ? ` ${Math.floor((100 * step) / total)}%` : '';
    this.status.text = this.interrupted
      ? `$(sync~spin) Attention: restarting engine (step ${step}/${total})`
      : `$(pulse) ${path.basename(this.active.runDir)}: step ${step}/${total}${pct}${r ? ` · loss ${r.loss.toFixed(3)}` : ''}`;
    this.status.tooltip = `${this.active.runDir}\nClick to open the dashboard or stop training`;
    this.status.show();
    this.statusShown = true;
  }

  /**
   * No run trains: the item keeps the last run's end (completed, stopped, paused…) until another
   * starts, hidden while a debug session trains its own.
   */
  private showEnd(): void {
    const end = this.lastEnd;
    if (!end || this.debugging.size > 0) {
      this.status.hide();
      this.statusShown = false;
      return;
    }
    const icon = STATE_ICONS[end.reason] ?? (end.reason === 'completed' ? 'check' : 'debug-stop');
    this.status.text = `$(${icon}) ${path.basename(end.runDir)}: ${STATE_LABELS[end.reason]} at step ${end.step}`;
    this.status.tooltip = `${end.runDir}\nClick to open the dashboard or resume training`;
    this.status.show();
    this.statusShown = true;
  }

  private async setContext(): Promise<void> {
    await vscode.commands.executeCommand('setContext', CTX_TRAINING, this.active !== undefined);
  }

  dispose(): void {
    for (const d of this.subs.splice(0)) d.dispose();
  }
}
