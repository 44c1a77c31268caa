/**
 * Follows a run another process writes (a PyTorch RunWriter, a torchrun job, another window's
 * engine): asks the engine what landed (run/poll) as soon as the folder's files change, and on a
 * timer as the fallback, since watchers miss changes on some network and remote file systems.
 */
import * as vscode from 'vscode';
import type { FollowState, PollCursor, RunPoll } from '../protocol/follow';
import { runPoll } from '../protocol/methods';
import type { RunActivity } from '../protocol/runFolder';
import type { EngineClient } from './engineClient';
import { errorText } from './errorText';

/** How often a folder is polled without a watcher event: a live writer, and one that has ended. */
const POLL_MS = 2000;
const POLL_FINISHED_MS = 10_000;
/** Watcher events closer than this make one poll. */
const DEBOUNCE_MS = 200;

export class RunFollower implements vscode.Disposable {
  private runDir: string | undefined;
  private cursor: PollCursor | undefined;
  private watcher: vscode.FileSystemWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private soonTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private pollAgain = false;

  constructor(
    private readonly engine: EngineClient,
    private readonly landed: (runDir: string, poll: RunPoll) => void,
    private readonly log: (line: string) => void,
  ) {}

  /** Follows `runDir` from where run/open left it. */
  follow(runDir: string, from: FollowState): void {
    this.stop();
    this.runDir = runDir;
    this.cursor = from.cursor;
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(runDir), '**/*'));
    w.onDidCreate(() => this.soon());
    w.onDidChange(() => this.soon());
    w.onDidDelete(() => this.soon());
    this.watcher = w;
    this.schedule(from.activity);
  }

  stop(): void {
    this.runDir = undefined;
    this.cursor = undefined;
    this.watcher?.dispose();
    this.watcher = undefined;
    clearTimeout(this.timer);
    clearTimeout(this.soonTimer);
  }

  private schedule(activity: RunActivity): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => void this.poll(),
      activity === 'finished' || activity === 'diverged' ? POLL_FINISHED_MS : POLL_MS,
    );
  }

  private soon(): void {
    clearTimeout(this.soonTimer);
    this.soonTimer = setTimeout(() => void this.poll(), DEBOUNCE_MS);
  }

  private async poll(): Promise<void> {
    const runDir = this.runDir;
    const cursor = this.cursor;
    if (!runDir || !cursor) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    let activity: RunActivity = 'stalled';
    try {
      const r = await this.engine.request(runPoll, { runDir, ...cursor });
      if (this.runDir !== runDir) return; // another run was selected meanwhile
      this.cursor = r.cursor;
      activity = r.activity;
      this.landed(runDir, r);
    } catch (err) {
      this.log(`following ${runDir}: ${errorText(err)}`);
    } finally {
      this.polling = false;
      if (this.runDir === runDir) this.schedule(activity);
      if (this.pollAgain) {
        this.pollAgain = false;
        this.soon();
      }
    }
  }

  dispose(): void {
    this.stop();
  }
}
