/**
 * The Debug Adapter Protocol side of the adapter: a DebugSession whose program is a training run.
 * Launch starts the engine (engine.ts) and the run (launch.ts); Continue, Step Over (one training
 * step) and Step Into (to the next telemetry row) resume it with a step budget where it is to pause
 * next (the nearest `step N` breakpoint, the next step, the next telemetry row), Pause stops it with
 * a checkpoint (train/stop), and the watch conditions and health checks (breakpoints.ts) pause it
 * where they hold. Each pause is a `stopped` event; the views (views.ts) and the console
 * (evaluate.ts) read the newest metrics and telemetry rows the engine sent. Step Back and Reverse
 * Continue show an earlier step as the engine replays it (rewind.ts); Step Over, Step Into and
 * Continue from there go through the replayed steps to the live one, then train on.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BreakpointEvent, StoppedEvent } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import {
  trainEnded,
  trainFork,
  trainEvent,
  trainMetrics,
  trainResume,
  trainStart,
  trainStop,
  trainTelemetry,
} from '../protocol/methods';
import { describeFinding } from '../protocol/telemetry';
import type { RunSummary, TrainEnded } from '../protocol/training';
import { type AttachArgs, checkAttachArgs, Follower, type FollowMotion, type FollowStop, POLL_MS } from './attach';
import { RunDebugSession } from './base';
import { checkModes, shown } from './breakpoints';
import { breakpointSteps, replayedDescription, Rewinder } from './rewind';
import { checkLaunchArgs, type LaunchArgs, trainParams } from './launch';
import { THREAD_ID } from './views';

/** What the run does until it pauses next, and what that pause is called. */
type Motion = { kind: 'continue' | 'next' | 'stepIn' | 'pause'; then?: () => void };

/** How long launch waits for configurationDone (the client sends its breakpoints first). */
const CONFIGURATION_MS = 10_000;

export class TrainingDebugSession extends RunDebugSession {
  private launch?: LaunchArgs;
  private motion?: Motion;
  /** The newest train/start or train/resume request. */
  private starting?: Promise<RunSummary>;
  private rewinder?: Rewinder;
  /** Attached: the followed run's logs, and the move along them under way. */
  private follower?: Follower;
  private following?: FollowMotion;

  protected override async launchRequest(
    response: DebugProtocol.LaunchResponse,
    raw: DebugProtocol.LaunchRequestArguments,
  ) {
    let args: LaunchArgs;
    try {
      args = checkLaunchArgs(raw as Record<string, unknown>);
    } catch (err) {
      return this.sendErrorResponse(response, 1, (err as Error).message);
    }
    this.launch = args;
    this.runDir = args.runDir;
    await Promise.race([this.configuration, new Promise((r) => setTimeout(r, CONFIGURATION_MS))]);
    const engine = this.startEngine(args.backend);
    engine.onNotification(trainMetrics, (p) => (this.metrics = p.rows.at(-1) ?? this.metrics));
    engine.onNotification(trainTelemetry, (p) => (this.telemetry = p.row));
    engine.onNotification(trainEvent, (p) => this.print(describeFinding(p.event)));
    engine.onNotification(trainEnded, (p) => this.onEnded(p));
    this.sendResponse(response);
    if (args.stopOnEntry) this.sendEvent(new StoppedEvent('entry', THREAD_ID));
    else void this.go({ kind: 'continue' }, this.continueTarget());
  }

  /** Attach: follows a run another process writes (or wrote), from its newest logged step. */
  protected override async attachRequest(
    response: DebugProtocol.AttachResponse,
    raw: DebugProtocol.AttachRequestArguments,
  ) {
    let args: AttachArgs;
    try {
      args = checkAttachArgs(raw as Record<string, unknown>);
    } catch (err) {
      return this.sendErrorResponse(response, 1, (err as Error).message);
    }
    this.runDir = args.runDir;
    await Promise.race([this.configuration, new Promise((r) => setTimeout(r, CONFIGURATION_MS))]);
    try {
      this.follower = await Follower.open(this.startEngine(args.backend), args.runDir);
    } catch (err) {
      await this.engine?.stop();
      return this.sendErrorResponse(response, 1, `attach: ${(err as Error).message}`);
    }
    this.summary = this.follower.summary;
    this.sendResponse(response);
    const at = this.follower.newest;
    this.showLogged({
      step: at,
      reason: 'entry',
      description: `attached at step ${at} (${this.follower.activity})`,
      ids: [],
    });
  }

  protected override async continueRequest(response: DebugProtocol.ContinueResponse) {
    response.body = { allThreadsContinued: true };
    this.sendResponse(response);
    if (this.follower) return this.followOn('continue');
    const at = this.viewing?.step;
    if (at === undefined) return this.go({ kind: 'continue' }, this.continueTarget());
    // Among replayed steps: on to the next logged breakpoint up to the live step, else train on
    const hit = (await this.history())?.steps.find((s) => s > at && s <= this.step);
    if (hit !== undefined) return this.show(hit, 'breakpoint');
    this.viewing = undefined;
    return this.go({ kind: 'continue' }, this.continueTarget());
  }

  /** Step Over: one training step (replayed while it is before the live one). */
  protected override nextRequest(response: DebugProtocol.NextResponse): void {
    this.sendResponse(response);
    if (this.follower) return void this.followOn('next');
    if (this.viewing) return void this.forward(this.viewing.step + 1, { kind: 'next' });
    void this.go({ kind: 'next' }, this.step + 1);
  }

  /** Step Back: the step before, as the engine replays it from the newest checkpoint before that. */
  protected override async stepBackRequest(response: DebugProtocol.StepBackResponse) {
    const at = this.viewing?.step ?? this.step;
    const why =
      this.motion || this.following
        ? 'the run is moving: pause it first'
        : at <= 1
          ? 'there is no step before step 1'
          : '';
    if (why) return this.sendErrorResponse(response, 3, `Step Back: ${why}`);
    this.sendResponse(response);
    await this.show(at - 1, 'step');
  }

  /** Reverse Continue: back to the latest earlier step where a breakpoint held, else to the first checkpoint. */
  protected override async reverseContinueRequest(response: DebugProtocol.ReverseContinueResponse) {
    const at = this.viewing?.step ?? this.step;
    if (this.motion || this.following || at <= 1)
      return this.sendErrorResponse(
        response,
        3,
        `Reverse Continue: ${this.motion ? 'pause the run first' : 'at step 1'}`,
      );
    this.sendResponse(response);
    const history = await this.history();
    const hit = history?.steps.filter((s) => s >= 1 && s < at).at(-1);
    if (hit !== undefined) return this.show(hit, 'breakpoint');
    await this.show(history?.checkpoints.find((c) => c >= 1 && c < at) ?? 1, 'step');
  }

  /** Step Into: on to the next telemetry row (known once the run's config.json exists: one step first otherwise). */
  protected override stepInRequest(response: DebugProtocol.StepInResponse): void {
    this.sendResponse(response);
    if (this.follower) return void this.followOn('stepIn');
    const every = this.telemetryEvery();
    const at = this.viewing?.step;
    if (at !== undefined)
      return void this.forward((Math.floor(at / (every ?? 1)) + 1) * (every ?? 1), { kind: 'stepIn' });
    if (every) return void this.go({ kind: 'stepIn' }, (Math.floor(this.step / every) + 1) * every);
    const onward = (): void => {
      const later = this.telemetryEvery();
      if (!later || this.step % later === 0) this.pause('step');
      else void this.go({ kind: 'stepIn' }, (Math.floor(this.step / later) + 1) * later);
    };
    void this.go({ kind: 'stepIn', then: onward }, this.step + 1);
  }

  protected override async pauseRequest(response: DebugProtocol.PauseResponse) {
    this.sendResponse(response);
    if (this.follower && this.following) {
      this.following = undefined;
      const at = this.follower.newest;
      return this.showLogged({ step: at, reason: 'pause', description: `step ${at} (the writer's newest)`, ids: [] });
    }
    if (!this.motion || !this.engine) return;
    this.motion = { kind: 'pause' };
    await this.starting?.catch(() => undefined); // a stop before the run is up would stop nothing
    await this.engine.request(trainStop).catch((err: Error) => this.print(`train/stop: ${err.message}`));
  }

  /**
   * Restart Frame on the step: forks the run at the paused step (its checkpoint) into
   * `<run>-fork-<step>` with the launch's `fork` head edits, trains the fork's first step, and
   * debugs the fork from there (train/fork; the parent is left as it is).
   */
  protected override async restartFrameRequest(response: DebugProtocol.RestartFrameResponse) {
    const launch = this.launch;
    const step = this.step;
    const why = !launch
      ? 'only a launched run forks'
      : this.motion
        ? 'pause the run first'
        : this.viewing
          ? 'come back to the live step first'
          : '';
    if (why || !launch) return this.sendErrorResponse(response, 3, `Restart Frame: ${why}`);
    const runDir = `${launch.runDir}-fork-${step}`;
    try {
      this.motion = {
        kind: 'next',
        then: () => this.pause('restart', `step ${this.step} of ${basename(runDir)}, forked from step ${step}`),
      };
      this.summary = await this.engine!.request(trainFork, {
        parent: launch.runDir,
        step,
        runDir,
        steps: step + 1,
        ...launch.fork,
      });
    } catch (err) {
      this.motion = undefined;
      return this.sendErrorResponse(response, 3, `Restart Frame: ${(err as Error).message}`);
    }
    this.launch = { ...launch, runDir };
    this.runDir = runDir;
    this.rewinder = undefined;
    this.sendResponse(response);
  }

  /** Attached: moves the step shown along the logs, reading the writer's new rows until the move stops. */
  private async followOn(motion: FollowMotion): Promise<void> {
    const f = this.follower!;
    const from = this.viewing?.step ?? this.step;
    this.following = motion;
    while (this.following === motion && !this.ended) {
      const stop = f.stopAfter(from, motion, this.breakpoints, this.filters);
      if (stop || f.done) {
        this.following = undefined;
        const end = `step ${f.newest} · the run is ${f.activity}: nothing more to follow`;
        return this.showLogged(stop ?? { step: f.newest, reason: 'step', description: end, ids: [] });
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      await f.poll().catch((err: Error) => this.print(`run/poll: ${err.message}`));
    }
  }

  /** Attached: stops at a logged step, as its writer logged it. */
  private showLogged(stop: Omit<FollowStop, 'reason'> & { reason: string }): void {
    this.step = this.follower!.newest;
    this.viewing = this.follower!.logged(stop.step);
    this.pause(stop.reason, stop.description, stop.ids);
  }

  /** Shows step `target` going forward from a replayed step: replayed while before the live step, then trained. */
  private async forward(target: number, motion: Motion): Promise<void> {
    if (target < this.step) return this.show(target, 'step');
    this.viewing = undefined;
    if (target === this.step) return this.pause('step');
    return this.go(motion, target);
  }

  /** Stops at `step`: the live step as it is, an earlier one replayed (rewind.ts). */
  private async show(step: number, reason: string): Promise<void> {
    if (step >= this.step) {
      this.viewing = undefined;
      return this.pause(reason);
    }
    try {
      this.rewinder ??= new Rewinder(this.engine!, this.runDir!);
      this.viewing = await this.rewinder.replay(step);
      this.pause(reason, replayedDescription(this.viewing));
    } catch (err) {
      this.print(`could not replay step ${step}: ${(err as Error).message}`);
      this.pause('step', `step ${this.viewing?.step ?? this.step}`);
    }
  }

  /** The run's logged breakpoint steps and checkpoints (undefined, said on the console, when it cannot be read). */
  private async history(): Promise<Awaited<ReturnType<typeof breakpointSteps>> | undefined> {
    try {
      return await breakpointSteps(this.engine!, this.runDir!, this.breakpoints, this.filters, this.summary!);
    } catch (err) {
      this.print(`could not read the run's logs: ${(err as Error).message}`);
      return undefined;
    }
  }

  /** The launch's budget, once the run's own summary is not there yet (stopped on entry). */
  protected override plannedSteps(): number {
    return Math.max(super.plannedSteps(), this.launch?.steps ?? 0);
  }

  /** Where Continue pauses: the nearest `step N` breakpoint past this step, else the run's budget. */
  private continueTarget(): number {
    const steps = this.breakpoints.flatMap((b) => ('step' in b && b.step > this.step ? [b.step] : []));
    return Math.min(this.launch!.steps, ...steps);
  }

  /** The run's telemetry interval, from its config.json (undefined before the run exists). */
  private telemetryEvery(): number | undefined {
    if (!this.summary || !this.launch) return undefined;
    try {
      const config = JSON.parse(readFileSync(join(this.launch.runDir, 'config.json'), 'utf8'));
      const every = config?.training?.telemetry_every;
      return Number.isInteger(every) && every > 0 ? every : undefined;
    } catch {
      return undefined;
    }
  }

  /** Trains on to step `target` (at most the launch's budget), with the breakpoints and filters of now. */
  private async go(motion: Motion, target: number): Promise<void> {
    const engine = this.engine!;
    const launch = this.launch!;
    if (this.step >= launch.steps) return this.finish(`the run is at its last step (${this.step})`);
    const steps = Math.min(target, launch.steps);
    this.motion = motion;
    const watched = this.breakpoints.flatMap((b) => ('watch' in b ? [b] : []));
    const observe = { watch: watched.map((b) => b.watch), checks: checkModes(this.filters) };
    try {
      this.starting = this.summary
        ? engine.request(trainResume, { runDir: launch.runDir, steps, ...observe })
        : engine.request(trainStart, { ...trainParams(launch, steps), ...observe });
      this.summary = await this.starting;
    } catch (err) {
      this.motion = undefined;
      const message = (err as Error).message;
      // The engine parsed the conditions against the model: a refused one is shown unverified, and the run goes on without it.
      const refused = /params\.watch\[(\d+)\]/.exec(message);
      const bp = refused ? watched[Number(refused[1])] : undefined;
      if (!bp) return this.finish(`training could not go on: ${message}`);
      const unverified = { id: bp.id, error: message };
      this.breakpoints = this.breakpoints.map((b) => (b === bp ? unverified : b));
      this.sendEvent(new BreakpointEvent('changed', shown(unverified)));
      return this.go(motion, target);
    }
  }

  private onEnded(e: TrainEnded): void {
    if (this.ended) return;
    this.step = e.step;
    const motion = this.motion;
    this.motion = undefined;
    if (e.reason === 'failed') return this.finish(`training failed: ${e.message ?? ''}`);
    if (e.event && (e.reason === 'paused' || e.reason === 'diverged')) {
      const watch = e.event.check === 'watch';
      const hit = this.breakpoints.filter((b) => 'watch' in b && e.event!.message.startsWith(`watch "${b.watch}"`));
      return this.pause(
        watch ? 'breakpoint' : 'exception',
        describeFinding(e.event),
        hit.map((b) => b.id),
      );
    }
    if (e.reason === 'stopped') return this.pause('pause', `paused at step ${e.step}`);
    if (e.step >= this.launch!.steps) return this.finish(`the run completed its ${e.step} steps`);
    if (motion?.then) return motion.then();
    const at = this.breakpoints.filter((b) => 'step' in b && b.step === e.step);
    if (motion?.kind === 'continue' && at.length)
      return this.pause(
        'breakpoint',
        `step ${e.step}`,
        at.map((b) => b.id),
      );
    // A Pause that came as the budget was reached stops there all the same
    this.pause(motion?.kind === 'pause' ? 'pause' : 'step', `step ${e.step}`);
  }
}
