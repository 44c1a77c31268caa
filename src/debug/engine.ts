/**
 * The engine as the debug adapter runs it: `node dist/cli.js serve` as a child process, spoken to in
 * JSON-RPC over its stdio as the extension's engine client does (src/extension/engineClient.ts, which
 * is tied to vscode), with every result and notification checked against src/protocol/methods.ts.
 * No restarts: a debug session that loses its engine ends.
 */
import * as cp from 'node:child_process';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { type NotificationDef, type RequestDef, validate } from '../protocol/rpc';

/** Time the engine gets to exit on its own once its stdin is closed (it checkpoints a run in progress), before SIGKILL. */
const STOP_GRACE_MS = 10_000;

export class DebugEngine {
  private readonly proc: cp.ChildProcess;
  private readonly conn: MessageConnection;
  private readonly exited: Promise<number | null>;

  /** `log` receives the engine's stderr lines and any malformed message, `onExit` an exit not asked for. */
  constructor(
    cliPath: string,
    serveArgs: string[],
    private readonly log: (line: string) => void,
    onExit: (code: number | null) => void,
  ) {
    this.proc = cp.spawn(process.execPath, [cliPath, 'serve', ...serveArgs], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    const { stdin, stdout, stderr } = this.proc as cp.ChildProcessWithoutNullStreams;
    this.conn = createMessageConnection(new StreamMessageReader(stdout), new StreamMessageWriter(stdin));
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => chunk.split('\n').forEach((l) => l.trim() && log(l)));
    stdin.on('error', () => undefined); // EPIPE when the engine dies mid-write; 'exit' says so
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    let stopping = false;
    this.stopping = () => (stopping = true);
    void this.exited.then((code) => stopping || onExit(code));
    this.proc.on('error', (err) => log(`could not start the engine (${cliPath} serve): ${err.message}`));
    this.conn.listen();
  }

  private readonly stopping: () => void;

  /** Calls `handler` with each well-formed `def` notification; a malformed one is logged and dropped. */
  onNotification<P>(def: NotificationDef<P>, handler: (params: P) => void): void {
    this.conn.onNotification(def.method, (params: unknown) => {
      const bad = validate(def.checkParams, params, def.method, 'params');
      if (bad) this.log(`malformed notification ignored: ${bad}`);
      else handler(params as P);
    });
  }

  /** Sends a request; its result is checked before the caller sees it. */
  async request<P, R>(def: RequestDef<P, R>, params?: P): Promise<R> {
    const result: unknown = await this.conn.sendRequest(def.method, ...(params === undefined ? [] : [params]));
    const bad = validate(def.checkResult, result, def.method, 'result');
    if (bad) throw new Error(`engine sent a malformed reply: ${bad}`);
    return result as R;
  }

  /** Closes the engine's stdin (it stops a run with a checkpoint and exits) and kills it if it lingers. */
  async stop(): Promise<void> {
    this.stopping();
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.conn.dispose();
    this.proc.stdin?.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}
