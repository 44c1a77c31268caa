/**
 * The one current selection every panel shows, and what keeps the panels bound to it: a run, the
 * step the views point at (the shared step cursor; none: the newest, following a live run), the
 * input pair (the probe or what the user typed) and optionally a head. Selecting loads that run's
 * metrics, schedule and probe history from the engine; a live run's metrics and snapshots reach
 * the panels only while it is the selected run, so no panel ever shows one run's history under
 * another's name. The selection is kept in the workspace state, so panels VS Code restores after a
 * reload ask the engine for their data again.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type Attention, describeInput, describeTarget, type HeadRef, type InputPair } from '../protocol/attention';
import type { RunPoll } from '../protocol/follow';
import type { RunActivity } from '../protocol/runFolder';
import type { RunSummary } from '../protocol/training';
import { runOpen, snapshotsGet } from '../protocol/methods';
import type { PanelKind, ViewHeader } from '../protocol/webview';
import { attentionFromWire } from '../protocol/wire';
import { attentionOfSelection } from './inspection';
import { errorText } from './errorText';
import type { EngineClient } from './engineClient';
import type { Panels } from './panels';
import type { PanelRequest } from './panels/base';
import { RunFollower } from './follower';
import { checkSelection, emptyInput, type InputAttention, PROBE, type Selection, STATE_KEY } from './selection';
import { CTX_HAS_RUN, scheduleOf, type TrainingSession } from './training';
import { forkHeader } from './runFork';

export class Viewer implements vscode.Disposable {
  private sel: Selection | undefined;
  private summary: RunSummary | undefined;
  /** The selected run, when another process writes it: what lands is shown as it lands. */
  private readonly follower: RunFollower;
  private activity: RunActivity | undefined;
  private readonly subs: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<Selection>();
  /** The selection changed (a run, a step, an input or a head). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly engine: EngineClient,
    private readonly panels: Panels,
    private readonly training: TrainingSession,
    private readonly memento: vscode.Memento,
    private readonly log: (line: string) => void,
  ) {
    panels.answerWith({ engine, selection: () => this.sel });
    this.follower = new RunFollower(engine, (runDir, poll) => this.landed(runDir, poll), log);
    this.subs.push(
      this.follower,
      this.changed,
      training.onDidStart(({ summary, fresh }) => this.onLiveStart(summary, fresh)),
      training.onDidMetrics(({ runDir, rows }) => {
        if (runDir === this.sel?.runDir) this.panels.appendMetrics(rows);
      }),
      training.onDidSnapshot(({ runDir, attention }) => this.onLiveSnapshot(runDir, attention)),
      training.onDidTelemetry(({ runDir, row }) => {
        if (runDir === this.sel?.runDir) this.panels.addTelemetry([row]);
      }),
      training.onDidFinding(({ runDir, event }) => {
        if (runDir === this.sel?.runDir) this.panels.addEvents([event]);
      }),
      training.onDidEnd((e) => {
        if (e.runDir !== this.sel?.runDir) return;
        if (this.summary) this.summary = { ...this.summary, running: false, step: e.step };
        void this.refreshSummary();
      }),
      panels.onDidRequest(({ from, request }) => void this.answer(from, request)),
      panels.onDidRevive(() => void this.restore()),
    );
  }

  get selection(): Selection | undefined {
    return this.sel;
  }

  /** The selected run's summary. */
  get run(): RunSummary | undefined {
    return this.summary;
  }

  /**
   * Selects a run: its summary, metrics and probe history come from the engine; the attention view
   * shows `input` (the probe by default) at `step` (the newest by default).
   */
  async selectRun(
    runDir: string,
    opts: { step?: number; input?: InputPair; head?: HeadRef } = {},
  ): Promise<InputAttention | undefined> {
    const [opened, snapshots] = await Promise.all([
      this.engine.request(runOpen, { runDir, ...(opts.step !== undefined ? { step: opts.step } : {}) }),
      this.loadSnapshots(runDir),
    ]);
    this.summary = opened.summary;
    this.sel = { runDir, input: opts.input ?? PROBE, ...(opts.step !== undefined ? { step: opts.step } : {}) };
    const ours = this.training.runDir === runDir;
    this.activity = ours ? undefined : opened.follow.activity;
    if (ours) this.follower.stop();
    else this.follower.follow(runDir, opened.follow);
    if (opts.head) this.sel.head = opts.head;
    const schedule = opened.summary.schedule.length ? scheduleOf(opened.summary) : null;
    const { rows, telemetry, events } = opened;
    this.panels.showRun(this.header(), { rows, schedule, snapshots, telemetry, events });
    this.changed.fire(this.sel);
    this.persist();
    return this.showSelected();
  }

  /** Moves the shared step cursor: the probe's attention at that step (its nearest snapshot). */
  async selectStep(step: number): Promise<void> {
    if (!this.sel) return;
    const snaps = this.panels.store.snapshots;
    const nearest = snaps.length
      ? snaps.reduce((a, b) => (Math.abs(b.source.step - step) < Math.abs(a.source.step - step) ? b : a)).source.step
      : step;
    const newest = snaps[snaps.length - 1]?.source.step;
    // At the newest snapshot of a live run the views follow the run again.
    const following = this.summary?.running && nearest === newest;
    if (following) delete this.sel.step;
    else this.sel.step = nearest;
    this.panels.showCursor(nearest);
    this.panels.setHeader(this.header());
    this.changed.fire(this.sel);
    this.persist();
    await this.showSelected();
  }

  /**
   * The attention of an input pair at a checkpoint (the selected run's newest by default). The
   * selection changes only once the engine has answered: a refused input (empty, too long, a
   * broken checkpoint) leaves the header and the view as they were.
   */
  async selectInput(input: InputPair, step?: number, runDir = this.sel?.runDir): Promise<InputAttention | undefined> {
    if (!runDir) throw new Error('no run is selected: open a run or train one first');
    const empty = emptyInput(input);
    if (empty) throw new Error(empty);
    if (runDir !== this.sel?.runDir) {
      return this.selectRun(runDir, { input, ...(step !== undefined ? { step } : {}) });
    }
    const before = this.sel;
    const next: Selection = { ...before, input, ...(step !== undefined ? { step } : {}) };
    if (step === undefined) delete next.step;
    const shown = await this.attentionOf(next);
    if (this.sel !== before) return undefined; // a newer selection won
    this.sel = next;
    if (shown) this.panels.showAttention(shown.attention);
    this.panels.setHeader(this.header());
    this.changed.fire(this.sel);
    this.persist();
    return shown;
  }

  selectHead(ref: HeadRef): void {
    if (!this.sel) return;
    this.sel.head = ref;
    this.changed.fire(this.sel);
    this.persist();
  }

  /** The header every panel shows. */
  header(): ViewHeader {
    const runDir = this.sel?.runDir ?? '';
    const target = this.sel ? describeTarget(this.sel.input) : undefined;
    return {
      runDir,
      run: path.basename(runDir),
      step: this.sel?.step ?? null,
      input: this.sel ? describeInput(this.sel.input) : 'probe',
      ...(target !== undefined ? { target } : {}),
      live: this.training.runDir === runDir,
      ...(this.activity && this.training.runDir !== runDir ? { activity: this.activity } : {}),
      checkpoints: this.summary?.checkpoints ?? [],
      vocab: this.summary?.vocab ?? true,
      ...forkHeader(runDir),
    };
  }

  /** Shows what the selection asks for in the attention view (and the inspector). */
  private async showSelected(): Promise<InputAttention | undefined> {
    const sel = this.sel;
    if (!sel) return undefined;
    const shown = await this.attentionOf(sel);
    if (this.sel !== sel || !shown) return undefined; // a newer selection won, or nothing yet
    this.panels.showAttention(shown.attention);
    return shown;
  }

  /** The attention `sel` asks for (a probe snapshot, or the engine's answer); undefined when there is none yet. */
  private async attentionOf(sel: Selection): Promise<InputAttention | undefined> {
    if (sel.input.kind === 'probe') {
      const snaps = this.panels.store.snapshots;
      const snap = sel.step === undefined ? snaps[snaps.length - 1] : snaps.find((s) => s.source.step === sel.step);
      if (snap) return { attention: snap, tokenLogProbs: [] };
      if (sel.step === undefined && !this.summary?.checkpoints.length) return undefined; // nothing yet
    }
    return attentionOfSelection(this.engine, sel);
  }

  private async loadSnapshots(runDir: string): Promise<Attention[]> {
    const wire = await this.engine.request(snapshotsGet, { runDir });
    const items: Attention[] = [];
    for (const [i, w] of wire.entries()) {
      try {
        items.push(attentionFromWire(w, `snapshots/get result[${i}]`));
      } catch (err) {
        this.log(`snapshot ignored: ${errorText(err)}`);
      }
    }
    return items;
  }

  private async refreshSummary(): Promise<void> {
    if (!this.sel) return;
    try {
      const opened = await this.engine.request(runOpen, { runDir: this.sel.runDir });
      this.summary = opened.summary;
      // how it ended (paused, diverged, finished), shown in the header at once
      if (this.training.runDir !== this.sel.runDir) this.activity = opened.follow.activity;
    } catch (err) {
      this.log(`run/open ${this.sel.runDir} failed: ${errorText(err)}`);
    }
    this.panels.setHeader(this.header());
  }

  /** A run started or went on: it becomes the selection, following its newest step. */
  private onLiveStart(summary: RunSummary, fresh: boolean): void {
    this.summary = summary;
    this.sel = { runDir: summary.runDir, input: PROBE };
    if (fresh) {
      this.panels.showRun(this.header(), { rows: [], schedule: scheduleOf(summary), snapshots: [] });
      this.changed.fire(this.sel);
      this.persist();
      return;
    }
    void this.selectRun(summary.runDir).catch((err: Error) => this.log(`selecting ${summary.runDir}: ${err.message}`));
  }

  /** What landed in a followed folder: appended as the engine's own training would append it. */
  private landed(runDir: string, p: RunPoll): void {
    if (runDir !== this.sel?.runDir) return;
    if (p.reset) {
      const { input, step, head } = this.sel;
      void this.selectRun(runDir, { input, ...(step !== undefined ? { step } : {}), ...(head ? { head } : {}) });
      return;
    }
    const changed = p.activity !== this.activity || p.checkpoints.length !== this.summary?.checkpoints.length;
    this.activity = p.activity;
    if (this.summary) {
      const step = p.rows[p.rows.length - 1]?.step ?? this.summary.step;
      this.summary = { ...this.summary, checkpoints: p.checkpoints, step };
    }
    if (p.rows.length) this.panels.appendMetrics(p.rows);
    p.snapshots.forEach((w, i) => this.onLiveSnapshot(runDir, attentionFromWire(w, `run/poll result.snapshots[${i}]`)));
    if (p.telemetry.length) this.panels.addTelemetry(p.telemetry);
    if (p.events.length) this.panels.addEvents(p.events);
    if (changed) this.panels.setHeader(this.header());
    if (p.rows.length || changed) this.changed.fire(this.sel);
  }

  private onLiveSnapshot(runDir: string, attention: Attention): void {
    if (runDir !== this.sel?.runDir) return;
    this.panels.addLiveSnapshot(attention, this.sel.input.kind === 'probe' && this.sel.step === undefined);
  }

  /** What a page asked that changes the selection (its panel answers the rest). */
  private async answer(from: PanelKind, request: PanelRequest): Promise<void> {
    try {
      switch (request.type) {
        case 'openHeadAt': {
          const ref = { kind: request.kind, layer: request.layer, head: request.head };
          await this.selectStep(request.step);
          this.selectHead(ref);
          this.panels.openHeadInspector(ref);
          break;
        }
        case 'hoverStep':
          this.panels.showHover(from, request.step);
          break;
        case 'openHead': {
          const ref = { kind: request.kind, layer: request.layer, head: request.head };
          this.selectHead(ref);
          this.panels.openHeadInspector(ref);
          break;
        }
        case 'cursor':
          await this.selectStep(request.step);
          break;
        case 'inspectInput':
          await this.selectInput(request.input, request.step);
          break;
      }
    } catch (err) {
      this.log(`${request.type} from a panel failed: ${errorText(err)}`);
      void vscode.window.showErrorMessage(`Attention Debugger: ${errorText(err)}`);
    }
  }

  private persist(): void {
    void this.memento.update(STATE_KEY, this.sel);
    void vscode.commands.executeCommand('setContext', CTX_HAS_RUN, this.sel !== undefined);
  }

  /** Panels came back after a window reload: select what was selected, asking the engine again. */
  async restore(): Promise<void> {
    if (this.sel) return;
    const saved = this.memento.get<unknown>(STATE_KEY);
    if (saved === undefined) return;
    const why = checkSelection(saved, 'saved selection');
    if (why) {
      this.log(`ignoring the saved selection: ${why}`);
      return;
    }
    const s = saved as Selection;
    try {
      await this.selectRun(s.runDir, { input: s.input, ...(s.step !== undefined ? { step: s.step } : {}) });
      if (s.head) {
        this.selectHead(s.head);
        this.panels.openHeadInspector(s.head);
      }
    } catch (err) {
      this.log(`could not restore the selection (${s.runDir}): ${errorText(err)}`);
    }
  }

  dispose(): void {
    for (const d of this.subs.splice(0)) d.dispose();
  }
}
