/**
 * Runs the engine (`node dist/cli.js serve`) as a child process and talks JSON-RPC to it over
 * its stdio, as a language client talks to its server. Training never blocks the extension host,
 * and an engine that crashes or runs out of memory is reported and restarted, with a back-off so
 * that an engine failing at start does not spin.
 */
import * as cp from 'node:child_process';
import * as vscode from 'vscode';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import type { EngineLog } from '../protocol/engine';
import { engineLog } from '../protocol/methods';
import { type NotificationDef, type RequestDef, validate } from '../protocol/rpc';

/** Restart delays after consecutive unexpected exits; the last one repeats. */
const BACKOFF_MS = [250, 1000, 4000, 15000, 30000];
/** An engine that stayed up this long counts as healthy again: the back-off starts over. */
const HEALTHY_AFTER_MS = 60_000;
/** Time the engine gets to exit on its own once its stdin is closed, before SIGKILL. */
const STOP_GRACE_MS = 2000;
/** Lines of the output channel kept for recentLog(). */
const RECENT_LINES = 200;

export interface EngineExit {
  pid: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Delay before the restart, or undefined when no restart follows (stopped, disposed). */
  restartInMs: number | undefined;
}

export class EngineClient implements vscode.Disposable {
  private proc: cp.ChildProcess | undefined;
  private conn: MessageConnection | undefined;
  private startedAt = 0;
  private everStarted = false;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private readonly exited = new WeakSet<cp.ChildProcess>();
  private readonly recent: string[] = [];
  /** Notification handlers, attached to every connection (they survive restarts). */
  private readonly handlers = new Map<string, Set<(params: unknown) => void>>();
  /** Resolves with the live connection; replaced at each (re)start. */
  private ready!: Promise<MessageConnection>;
  private resolveReady!: (conn: MessageConnection) => void;
  private rejectReady!: (err: Error) => void;

  private readonly didStart = new vscode.EventEmitter<number>();
  private readonly didExit = new vscode.EventEmitter<EngineExit>();
  /** Fires with the pid each time an engine process starts. */
  readonly onDidStart = this.didStart.event;
  /** Fires each time the engine process ends, expected or not. */
  readonly onDidExit = this.didExit.event;

  constructor(
    private readonly cliPath: string,
    private readonly output: vscode.OutputChannel,
    /** Extra arguments for `serve` (e.g. `--backend wasm`), read at each (re)start. */
    private readonly serveArgs: () => string[] = () => [],
  ) {
    this.resetReady();
  }

  /** The engine's process id, or undefined while it is not running. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Starts the engine process (the first request does it too: no engine runs until one is needed). */
  start(): void {
    if (this.disposed || this.proc) return;
    this.everStarted = true;
    // The extension host's own runtime: node under VS Code's server, Electron on the desktop
    // (ELECTRON_RUN_AS_NODE makes it a plain Node), so no separate Node install is needed.
    const args = [this.cliPath, 'serve', ...this.serveArgs()];
    const proc = cp.spawn(process.execPath, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    this.proc = proc;
    this.startedAt = Date.now();
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin), {
      error: (m) => this.log(`[rpc] ${m}`),
      warn: (m) => this.log(`[rpc] ${m}`),
      info: () => undefined,
      log: () => undefined,
    });
    conn.onNotification(engineLog.method, (...args: unknown[]) => {
      const params = args[0];
      const bad = validate(engineLog.checkParams, params, engineLog.method, 'params');
      if (bad) this.log(`[engine] malformed notification: ${bad}`);
      else this.log(`[engine ${(params as EngineLog).level}] ${(params as EngineLog).message}`);
    });
    for (const method of this.handlers.keys()) this.attach(conn, method);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim()) this.log(`[engine stderr] ${line}`);
    });
    proc.stdin.on('error', () => undefined); // EPIPE when the engine dies mid-write; 'exit' reports it
    proc.on('error', (err) => {
      this.log(`could not start the engine (${process.execPath} ${this.cliPath} serve): ${err.message}`);
      this.onExit(proc, null, null);
    });
    proc.on('exit', (code, signal) => this.onExit(proc, code, signal));
    conn.listen();
    this.conn = conn;
    this.log(`engine started: pid ${proc.pid} (${args.slice(1).join(' ')})`);
    this.resolveReady(conn);
    if (proc.pid !== undefined) this.didStart.fire(proc.pid);
  }

  /**
   * Calls `handler` with each well-formed `def` notification from this and every later engine
   * process; a malformed one is logged (naming the field) and dropped, and a handler that throws
   * is logged too: nothing the engine sends can crash the extension.
   */
  onNotification<P>(def: NotificationDef<P>, handler: (params: P) => void): vscode.Disposable {
    const wrapped = (params: unknown): void => {
      const bad = validate(def.checkParams, params, def.method, 'params');
      if (bad) {
        this.log(`[engine] malformed notification ignored: ${bad}`);
        return;
      }
      try {
        handler(params as P);
      } catch (err) {
        this.log(`${def.method} handler failed: ${(err as Error).stack ?? String(err)}`);
      }
    };
    let set = this.handlers.get(def.method);
    if (!set) {
      set = new Set();
      this.handlers.set(def.method, set);
      if (this.conn) this.attach(this.conn, def.method);
    }
    set.add(wrapped);
    return new vscode.Disposable(() => set.delete(wrapped));
  }

  private attach(conn: MessageConnection, method: string): void {
    conn.onNotification(method, (...args: unknown[]) => {
      // By name: one object; anything else reaches the checker as the array and is reported.
      const params = args.length === 1 ? args[0] : args;
      for (const h of this.handlers.get(method) ?? []) h(params);
    });
  }

  /** Sends a request once the engine is up (waiting through a restart); validates the result. */
  async request<P, R>(def: RequestDef<P, R>, params?: P, token?: vscode.CancellationToken): Promise<R> {
    if (this.disposed) throw new Error('the engine client is disposed');
    if (!this.everStarted) this.start();
    const conn = await this.ready;
    // Params by name (one object) or none; a token is passed only when there is one (an undefined
    // trailing argument would be sent as a positional parameter).
    const args: unknown[] = params === undefined ? [] : [params];
    if (token) args.push(token);
    const result: unknown = await conn.sendRequest(def.method, ...args);
    const bad = validate(def.checkResult, result, def.method, 'result');
    if (bad) throw new Error(`engine sent a malformed reply: ${bad}`);
    return result as R;
  }

  /** Stops the engine (if running) and starts a fresh one now, forgetting earlier crashes. */
  async restart(): Promise<void> {
    this.crashes = 0;
    clearTimeout(this.restartTimer);
    await this.stop();
    this.start();
  }

  /** Closes the engine's stdin (it exits on its own) and kills it if it lingers. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined; // marks the coming exit as expected
    this.conn?.dispose();
    this.conn = undefined;
    this.resetReady();
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.stdin?.end();
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.restartTimer);
    const waiting = this.rejectReady;
    await this.stop();
    waiting(new Error('the engine client is disposed'));
    this.rejectReady(new Error('the engine client is disposed'));
    this.didStart.dispose();
    this.didExit.dispose();
  }

  private onExit(proc: cp.ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited.has(proc)) return; // 'error' and 'exit' can both report one process
    this.exited.add(proc);
    if (proc !== this.proc) {
      // Expected: stop() already let go of it.
      this.didExit.fire({ pid: proc.pid, code, signal, restartInMs: undefined });
      return;
    }
    this.proc = undefined;
    this.conn?.dispose(); // rejects requests in flight
    this.conn = undefined;
    this.resetReady();
    if (Date.now() - this.startedAt > HEALTHY_AFTER_MS) this.crashes = 0;
    const delay = BACKOFF_MS[Math.min(this.crashes, BACKOFF_MS.length - 1)] ?? 30000;
    this.crashes++;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    this.log(`engine (pid ${proc.pid}) exited with ${how}; restarting in ${delay} ms`);
    this.didExit.fire({ pid: proc.pid, code, signal, restartInMs: delay });
    if (this.crashes === 1) {
      // Once per series of crashes: a crash loop shows one message, the output channel has the rest.
      void vscode.window.showWarningMessage(
        `Attention Debugger: the engine exited (${how}) and is being restarted. See the "Attention Debugger" output.`,
      );
    }
    this.restartTimer = setTimeout(() => this.start(), delay);
  }

  private resetReady(): void {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => undefined); // rejected only at dispose, possibly with nobody waiting
  }

  /** The last lines written to the output channel (which has no read API): for bug reports and tests. */
  recentLog(): string[] {
    return [...this.recent];
  }

  /** Writes a stamped line to the output channel (and recentLog). */
  log(line: string): void {
    const stamped = `${new Date().toISOString()} ${line}`;
    this.output.appendLine(stamped);
    this.recent.push(stamped);
    if (this.recent.length > RECENT_LINES) this.recent.shift();
  }
}
