/**
 * What a JSON-RPC message of the engine ↔ extension wire is: its method, its TS types and its
 * runtime validators. methods.ts lists every one; the client (src/extension/engineClient.ts) and
 * the server (src/engine/server/rpc.ts) wrap them with vscode-jsonrpc and validate params on the
 * way in, results on the way out.
 */
import type { Check } from './check';

export interface RequestDef<P, R> {
  readonly method: string;
  readonly checkParams: Check<P>;
  readonly checkResult: Check<R>;
}

export interface NotificationDef<P> {
  readonly method: string;
  readonly checkParams: Check<P>;
}

/** Validates `value` against `check`, prefixed with the method; undefined when well formed. */
export function validate(check: Check, value: unknown, method: string, what: 'params' | 'result'): string | undefined {
  return check(value, `${method} ${what}`);
}

/** A request of the catalogue (methods.ts). */
export function request<P, R>(method: string, checkParams: Check<P>, checkResult: Check<R>): RequestDef<P, R> {
  return { method, checkParams, checkResult };
}

/** A notification of the catalogue (methods.ts). */
export function notification<P>(method: string, checkParams: Check<P>): NotificationDef<P> {
  return { method, checkParams };
}
