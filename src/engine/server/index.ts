/**
 * The engine's side of the wire: JSON-RPC 2.0 (vscode-jsonrpc) on stdin/stdout, for the
 * extension's EngineClient. `attention-debugger serve` runs it. stdout is the wire, so nothing else
 * may print there: console output is sent to stderr, which the client shows in its output channel.
 * Messages are defined once in src/protocol/engine.ts; params are validated on the way in and
 * results on the way out, so a malformed message fails with an error that names the field.
 */
import { createMessageConnection, ErrorCodes, type MessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { type EngineInfo, type EngineLog, engineInfo, engineLog, type NotificationDef, type RequestDef, validate } from '../../protocol/engine';
import { availableBackends, initBackend } from '../backend';

export interface ServerOptions {
  /** Force a tfjs backend (as `--backend`); otherwise the first that loads. */
  backend?: string;
}

const VERSION: string = require('../../../package.json').version;

/** Serves until the client closes the connection (stdin ends); resolves with the exit code. */
export async function runServer(opts: ServerOptions = {}): Promise<number> {
  keepStdoutForTheWire();
  const conn = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout), {
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
      log('info', `tfjs backend: ${name}`);
      return name;
    });
    return backend;
  };
  ensureBackend().catch((err: Error) => log('error', err.message));

  handle(conn, engineInfo, async (): Promise<EngineInfo> => {
    const active = await ensureBackend();
    return { version: VERSION, backend: active, backends: await availableBackends() };
  });

  const closed = new Promise<number>((resolve) => conn.onClose(() => resolve(0)));
  conn.listen();
  log('info', `engine ${VERSION} serving JSON-RPC on stdio (pid ${process.pid}, node ${process.version})`);
  const code = await closed;
  conn.dispose();
  // The client is gone. Should a native backend hold the event loop open, do not linger as an orphan.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}

function handle<P, R>(conn: MessageConnection, def: RequestDef<P, R>, handler: (params: P) => Promise<R>): void {
  // vscode-jsonrpc calls a handler with (token) when there are no params, (params, token) when they
  // come by name and (...params, token) by position; this protocol sends none or one object.
  conn.onRequest(def.method, async (...args: unknown[]) => {
    if (args.length > 2) throw new ResponseError(ErrorCodes.InvalidParams, `${def.method} params must be sent by name, not by position`);
    const params = args.length === 2 ? args[0] : undefined;
    const badParams = validate(def.checkParams, params, def.method, 'params');
    if (badParams) throw new ResponseError(ErrorCodes.InvalidParams, badParams);
    const result = await handler(params as P);
    const badResult = validate(def.checkResult, result, def.method, 'result');
    if (badResult) throw new ResponseError(ErrorCodes.InternalError, `engine bug: ${badResult}`);
    return result;
  });
}

function notify<P>(conn: MessageConnection, def: NotificationDef<P>, params: P): void {
  try {
    void conn.sendNotification(def.method, params).catch(() => undefined);
  } catch {
    // The client is gone (the connection throws once closed); nobody is left to tell.
  }
}

/** Libraries that print (tfjs greets on stdout) would corrupt the wire: console goes to stderr. */
function keepStdoutForTheWire(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
