/**
 * What every command works with (rust-analyzer's Ctx): the engine client, the panels, the training
 * session, the log and the Runs view. Commands are functions of it (commands/).
 */
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EngineClient } from './engineClient';
import { errorText } from './errorText';
import type { Panels } from './panels';
import type { TrainingSession } from './training';
import type { Viewer } from './viewer';

export interface Ctx {
  readonly engine: EngineClient;
  readonly panels: Panels;
  readonly training: TrainingSession;
  readonly viewer: Viewer;
  /** The workspace's memory: the Train wizard's last choices. */
  readonly workspaceState: vscode.Memento;
  readonly log: (line: string) => void;
  readonly refreshRuns: () => void;
}

/**
 * The run a command was given: `{ runDir }` from code, or the Runs view's item (`{ kind: 'run',
 * dir }` or a checkpoint's `{ kind: 'checkpoint', runDir }`) when run from its context menu.
 */
export function runDirOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return absolute(arg);
  if (typeof arg !== 'object' || arg === null) return undefined;
  const a = arg as { runDir?: unknown; kind?: unknown; dir?: unknown };
  if (typeof a.runDir === 'string') return absolute(a.runDir);
  if (a.kind === 'run' && typeof a.dir === 'string') return absolute(a.dir);
  return undefined;
}

/** A path the user gave, made absolute against the workspace's first folder (else the home folder): the engine takes no other. */
export function absolute(p: string): string {
  const base = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
  return path.resolve(base, p);
}

/** A registered command's handler: VS Code passes whatever the caller gave (a tree item, arguments). */
export type Cmd = (...args: any[]) => unknown; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Runs `fn`; an error is logged and shown, and the command returns undefined. */
export function guarded<A extends unknown[], R>(
  ctx: Ctx,
  name: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R | undefined> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      ctx.log(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      void vscode.window.showErrorMessage(`Attention Debugger: ${name} failed: ${errorText(err)}`);
      return undefined;
    }
  };
}
