/** The questions Train, Resume and friends ask when their arguments do not answer them. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DataChoice } from '../protocol/training';
import type { Ctx } from './ctx';
import { CONFIG_PRESETS, settings } from './settings';
import { listRuns, runsRoot } from './views';

export function stamp(d = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export function dataLabel(d: DataChoice): string {
  if (d.kind === 'task') return d.task;
  if (d.kind === 'gettext') return `gettext-${d.lang}`;
  return path.basename(d.dir) || 'files';
}

export async function pickData(): Promise<DataChoice | undefined> {
  type Item = vscode.QuickPickItem & { choice: 'copy' | 'reverse' | 'sort' | 'gettext' | 'files' };
  const items: Item[] = [
    { label: 'reverse', description: 'synthetic: output the input reversed', choice: 'reverse' },
    { label: 'copy', description: 'synthetic: output the input', choice: 'copy' },
    { label: 'sort', description: 'synthetic: output the input sorted', choice: 'sort' },
    {
      label: 'gettext',
      description: "English → a language, from this machine's translation catalogs",
      choice: 'gettext',
    },
    { label: 'Parallel files…', description: 'a folder with train/valid files in two languages', choice: 'files' },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Attention Debugger: Train (1/3) — data',
    placeHolder: 'What should the Transformer learn?',
  });
  if (!pick) return undefined;
  if (pick.choice === 'gettext') {
    const lang = await vscode.window.showInputBox({
      title: 'Target language of the gettext catalogs',
      value: 'de',
      prompt: 'A language code such as de, fr, es',
    });
    return lang ? { kind: 'gettext', lang: lang.trim() } : undefined;
  }
  if (pick.choice === 'files') {
    const folder = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      openLabel: 'Use these parallel files',
      defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    return folder?.[0] ? { kind: 'files', dir: folder[0].fsPath } : undefined;
  }
  return { kind: 'task', task: pick.choice };
}

export async function pickConfig(): Promise<string | undefined> {
  const preferred = settings().get<string>('defaultConfig') || 'tiny';
  const hints: Record<string, string> = {
    tiny: 'd_model 64, 2+2 layers: minutes on a laptop',
    small: 'd_model 256, 3+3 layers',
    base: "the paper's base model",
    big: "the paper's big model",
  };
  const items: vscode.QuickPickItem[] = [...CONFIG_PRESETS]
    .sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0))
    .map((c) => ({ label: c, description: hints[c] }));
  items.push({ label: 'JSON file…', description: 'a config.json with a "training" section' });
  const pick = await vscode.window.showQuickPick(items, { title: 'Attention Debugger: Train (2/3) — model' });
  if (!pick) return undefined;
  if (pick.label !== 'JSON file…') return pick.label;
  const file = await vscode.window.showOpenDialog({
    canSelectFiles: true,
    filters: { JSON: ['json'] },
    openLabel: 'Use this config',
  });
  return file?.[0]?.fsPath;
}

/** A run folder: the live one, the one given, or picked from the run folder (or browsed to). */
export async function pickRun(ctx: Ctx, title: string, preferLive = true): Promise<string | undefined> {
  const live = ctx.training.runDir ?? ctx.training.summary?.runDir;
  const root = runsRoot();
  const runs = root ? listRuns(root).map((r) => r.dir) : [];
  if (live && !runs.includes(live)) runs.unshift(live);
  if (preferLive && live && runs.length === 1) return live;
  const items: (vscode.QuickPickItem & { dir?: string })[] = runs.map((dir) => ({
    label: path.basename(dir),
    description: dir === ctx.training.runDir ? 'training' : dir === live ? 'current' : '',
    detail: dir,
    dir,
  }));
  items.push({ label: 'Browse…', description: 'a run folder or a checkpoint folder' });
  const pick = await vscode.window.showQuickPick(items, { title });
  if (!pick) return undefined;
  if (pick.dir) return pick.dir;
  const folder = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    defaultUri: root ? vscode.Uri.file(root) : undefined,
    openLabel: 'Open',
  });
  return folder?.[0]?.fsPath;
}
