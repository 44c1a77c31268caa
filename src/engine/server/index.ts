/**
 * The engine's side of the wire: JSON-RPC 2.0 (vscode-jsonrpc) on stdin/stdout, for the
 * extension's EngineClient. `attention-debugger serve` runs it. stdout is the wire, so nothing else
 * may print there: console output is sent to stderr, which the client shows in its output channel.
 * Messages are listed once in src/protocol/methods.ts; params are validated on the way in and
 * results on the way out, so a malformed message fails with an error that names the field.
 */
import { createMessageConnection, ErrorCodes, type ResponseMessage, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { FramedReader } from './framing';
import type { EngineInfo, EngineLog } from '../../protocol/engine';
import { engineInfo, engineLog } from '../../protocol/methods';
import { handle, notify } from './rpc';
import { registerInspectionHandlers } from './inspection';
import { TrainingService } from './training';
import { availableBackends, gpuAdapter, initBackend, matMulDetail } from '../backend';

export interface ServerOptions {
  /** Force a tfjs backend (as `--backend`); otherwise the first that loads. */
  backend?: string;
}

const VERSION: string = require('../../../package.json').version;

/** Serves until the client closes the connection (stdin ends); resolves with the exit code. */
export async function runServer(opts: ServerOptions = {}): Promise<number> {
  keepStdoutForTheWire();
  const writer = new StreamMessageWriter(process.stdout);
  // A bad frame is answered with one error (framing.ts says which) and logged; the frames after it are read as usual.
  const reader = new FramedReader(process.stdin, (why, { code, id }) => {
    process.stderr.write(`[rpc] dropped ${why}\n`);
    if (code === ErrorCodes.InvalidParams && id === null) return; // a notification: JSON-RPC answers none
    const message =
      code === ErrorCodes.ParseError
        ? `parse error: dropped ${why}`
        : code === ErrorCodes.InvalidRequest
          ? `invalid request: dropped ${why}`
          : why;
    void writer.write({ jsonrpc: '2.0', id, error: { code, message } } as ResponseMessage).catch(() => undefined);
  });
  const conn = createMessageConnection(reader, writer, {
    error: (m) => process.stderr.write(`[rpc] ${m}\n`),
    warn: (m) => process.stderr.write(`[rpc] ${m}\n`),
    info: () => undefined,
    log: () => undefined,
  });
  const log = (level: EngineLog['level'], message: string): void => notify(conn, engineLog, { level, message });

  // Backend loading starts at once (it can take seconds) and is awaited by the requests needing it.
  let backend: Promise<string> | undefined;
  const ensureBackend = (): Promise<string> => {
    backend ??= initBackend(opts.backend).then((name) => {
      log('info', `tfjs backend: ${name}; matMul: ${matMulDetail()}`);
      return name;
    });
    return backend;
  };
  ensureBackend().catch((err: Error) => log('error', err.message));

  handle(conn, engineInfo, async (): Promise<EngineInfo> => {
    const active = await ensureBackend();
    const backends = await availableBackends();
    return { version: VERSION, backend: active, backends, matmul: matMulDetail(), adapter: gpuAdapter() };
  });

  const training = new TrainingService(conn, ensureBackend, log);
  registerInspectionHandlers(conn, ensureBackend, () => training.runDir);

  const closed = new Promise<number>((resolve) => conn.onClose(() => resolve(0)));
  conn.listen();
  log('info', `engine ${VERSION} serving JSON-RPC on stdio (pid ${process.pid}, node ${process.version})`);
  const code = await closed;
  await training.shutdown(); // the client is gone: end the run with a checkpoint it can resume from
  conn.dispose();
  // The client is gone. Should a native backend hold the event loop open, do not linger as an orphan.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}

/** Libraries that print (tfjs greets on stdout) would corrupt the wire: console goes to stderr. */
function keepStdoutForTheWire(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
