/** Typed request handlers and notifications over vscode-jsonrpc, validated against src/protocol on both ends. */
import { ErrorCodes, type MessageConnection, ResponseError } from 'vscode-jsonrpc/node';
import { type NotificationDef, type RequestDef, validate } from '../../protocol/rpc';

export function handle<P, R>(conn: MessageConnection, def: RequestDef<P, R>, handler: (params: P) => Promise<R>): void {
  // vscode-jsonrpc calls a handler with (token) when there are no params, (params, token) when they
  // come by name and (...params, token) by position; this protocol sends none or one object.
  conn.onRequest(def.method, async (...args: unknown[]) => {
    if (args.length > 2)
      throw new ResponseError(ErrorCodes.InvalidParams, `${def.method} params must be sent by name, not by position`);
    const params = args.length === 2 ? args[0] : undefined;
    const badParams = validate(def.checkParams, params, def.method, 'params');
    if (badParams) throw new ResponseError(ErrorCodes.InvalidParams, badParams);
    let result: R;
    try {
      result = await handler(params as P);
    } catch (err) {
      // The user reads this message: send it as it is (vscode-jsonrpc would prefix "Request … failed
      // with message:"), keeping a ResponseError's own code and data.
      if (err instanceof ResponseError) throw err;
      throw new ResponseError(ErrorCodes.InternalError, err instanceof Error ? err.message : String(err));
    }
    const badResult = validate(def.checkResult, result, def.method, 'result');
    if (badResult) throw new ResponseError(ErrorCodes.InternalError, `engine bug: ${badResult}`);
    return result;
  });
}

export function notify<P>(conn: MessageConnection, def: NotificationDef<P>, params: P): void {
  try {
    void conn.sendNotification(def.method, params).catch(() => undefined);
  } catch {
    // The client is gone (the connection throws once closed); nobody is left to tell.
  }
}
