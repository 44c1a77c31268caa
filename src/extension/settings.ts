/** The extension's settings (package.json `contributes.configuration`) and the config presets it offers. */
import * as vscode from 'vscode';

export const settings = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('attentionDebugger');

export const CONFIG_PRESETS = ['tiny', 'small', 'base', 'big'] as const;
