/**
 * The engine ↔ extension protocol: JSON-RPC 2.0 over the engine process's stdin/stdout.
 * Requests have an id and a result; notifications have neither. Each message is described once
 * here (method name, TS types, runtime validators); the client (src/extension/engineClient.ts)
 * and the server (src/engine/server/) wrap these with vscode-jsonrpc. Nothing heavy is imported.
 */
import { arrayOf, isNothing, isString, object, oneOf } from './check';
import type { NotificationDef, RequestDef } from './rpc';

// ---- engine/info: who is answering, and on which tfjs backend ------------------------------

export interface EngineInfo {
  /** The engine's version (package.json). */
  version: string;
  /** The active tfjs backend: webgpu, tensorflow, wasm or cpu. */
  backend: string;
  /** Every backend that loads on this machine. */
  backends: string[];
  /** How matrix products run: on the backend, or (wasm) through OpenBLAS, with why not if not. */
  matmul: string;
  /** The GPU adapter Dawn finds (vendor, architecture, description), or why there is none. */
  adapter: string;
}

export const engineInfo: RequestDef<void, EngineInfo> = {
  method: 'engine/info',
  checkParams: isNothing,
  checkResult: object({
    version: isString,
    backend: isString,
    backends: arrayOf(isString),
    matmul: isString,
    adapter: isString,
  }),
};

// ---- engine/log: a line for the extension's output channel ----------------------------------

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface EngineLog {
  level: LogLevel;
  message: string;
}

export const engineLog: NotificationDef<EngineLog> = {
  method: 'engine/log',
  checkParams: object({ level: oneOf(LOG_LEVELS), message: isString }),
};
