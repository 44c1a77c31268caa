/** The extension's settings (package.json `contributes.configuration`) and the config presets it offers. */
import * as vscode from 'vscode';
import { CHECKS, type CheckMode, type CheckName } from '../protocol/telemetry';

export const settings = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('attentionDebugger');

export const CONFIG_PRESETS = ['tiny', 'small', 'base', 'big'] as const;

const MODES: readonly CheckMode[] = ['off', 'warn', 'break'];

/**
 * The `attentionDebugger.checks` setting as train/start's `checks` (none when empty); entries that
 * are no check or no mode are left out (the Settings editor marks them already).
 */
export function checksSetting(): { checks?: Partial<Record<CheckName, CheckMode>> } {
  const raw = settings().get<Record<string, unknown>>('checks') ?? {};
  const checks = Object.fromEntries(
    Object.entries(raw).filter(([k, v]) => CHECKS.includes(k as CheckName) && MODES.includes(v as CheckMode)),
  ) as Partial<Record<CheckName, CheckMode>>;
  return Object.keys(checks).length ? { checks } : {};
}
