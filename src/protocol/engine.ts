/**
 * The payloads of the engine's own messages (methods.ts: engine/info, engine/log): who is
 * answering, and the lines it logs.
 */
import { type Check, arrayOf, isString, object, oneOf } from './check';

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

export const checkEngineInfo: Check<EngineInfo> = object({
  version: isString,
  backend: isString,
  backends: arrayOf(isString),
  matmul: isString,
  adapter: isString,
});

// ---- engine/log: a line for the extension's output channel ----------------------------------

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface EngineLog {
  level: LogLevel;
  message: string;
}

export const checkEngineLog: Check<EngineLog> = object({ level: oneOf(LOG_LEVELS), message: isString });
