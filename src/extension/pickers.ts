/** The questions Train, Resume and friends ask when their arguments do not answer them. */
import { readJsonFile } from '../engine/io/json';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ATTENTION_KINDS, headId } from '../protocol/attention';
import { RUN_FILES } from '../protocol/runFolder';
import { type CheckName, DEFAULT_CHECK_MODES, HEALTH_CHECKS } from '../protocol/telemetry';
import type { DataChoice } from '../protocol/training';
import type { Ctx } from './ctx';
import { CONFIG_PRESETS, checksSetting, settings } from './settings';
import { listRuns, runsRoot } from './views';

export function stamp(d = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const day = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}`;
  return `${day}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export function dataLabel(d: DataChoice): string {
  if (d.kind === 'task') return d.task;
  if (d.kind === 'gettext') return `gettext-${d.lang}`;
  return path.basename(d.dir) || 'files';
}

/** Settings the Train wizard's Advanced step asks for (undefined: the config's). */
export interface TrainingChoices {
  steps?: number;
  warmup?: number;
  lrFactor?: number;
  batchTokens?: number;
  /** The health checks that stop training (the rest warn, or stay off where the setting says so). */
  breakOn?: CheckName[];
}

type DataPick = 'copy' | 'reverse' | 'sort' | 'gettext' | 'files';

/** What to learn; `last` (the workspace's previous choice) is offered first. */
export async function pickData(last?: DataChoice): Promise<DataChoice | undefined> {
  type Item = vscode.QuickPickItem & { choice: DataPick };
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
  const lastPick = last ? (last.kind === 'task' ? last.task : last.kind) : undefined;
  const ordered = [...items].sort((a, b) => Number(b.choice === lastPick) - Number(a.choice === lastPick));
  const pick = await vscode.window.showQuickPick(ordered, {
    title: 'Attention Debugger: Train (1/4) — data',
    placeHolder: 'What should the Transformer learn?',
  });
  if (!pick) return undefined;
  if (pick.choice === 'gettext') {
    const lang = await vscode.window.showInputBox({
      title: 'Target language of the gettext catalogs',
      value: last?.kind === 'gettext' ? last.lang : 'de',
      prompt: 'A language code such as de, fr, es',
    });
    return lang ? { kind: 'gettext', lang: lang.trim() } : undefined;
  }
  if (pick.choice === 'files') {
    const folder = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      openLabel: 'Use these parallel files',
      defaultUri: last?.kind === 'files' ? vscode.Uri.file(last.dir) : vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    return folder?.[0] ? { kind: 'files', dir: folder[0].fsPath } : undefined;
  }
  return { kind: 'task', task: pick.choice };
}

export async function pickConfig(last?: string): Promise<string | undefined> {
  const preferred = last ?? (settings().get<string>('defaultConfig') || 'tiny');
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
  const pick = await vscode.window.showQuickPick(items, { title: 'Attention Debugger: Train (2/4) — model' });
  if (!pick) return undefined;
  if (pick.label !== 'JSON file…') return pick.label;
  const file = await vscode.window.showOpenDialog({
    canSelectFiles: true,
    filters: { JSON: ['json'] },
    openLabel: 'Use this config',
  });
  return file?.[0]?.fsPath;
}

const ADVANCED: { key: Exclude<keyof TrainingChoices, 'breakOn'>; label: string; hint: string; integer: boolean }[] = [
  { key: 'steps', label: 'Steps', hint: 'training steps (updates)', integer: true },
  { key: 'warmup', label: 'Warmup', hint: 'warmup_steps of eq. 3: the learning rate rises this long', integer: true },
  {
    key: 'lrFactor',
    label: 'LR factor',
    hint: 'scales the whole learning-rate curve (1 in the paper)',
    integer: false,
  },
  { key: 'batchTokens', label: 'Batch tokens', hint: 'padded source + target tokens a batch', integer: true },
];

/**
 * Step 3 of Train: go with the config's settings, or change steps, warmup, LR factor, batch tokens
 * and the checks that break (each remembered for the next Train in this workspace). Undefined: cancelled.
 * A JSON config (`fromFile`) brings its own training section: its settings come first, pre-selected.
 */
export async function pickAdvanced(last: TrainingChoices, fromFile = false): Promise<TrainingChoices | undefined> {
  const chosen = ADVANCED.filter((a) => last[a.key] !== undefined).map((a) => `${a.label} ${last[a.key]}`);
  if (last.breakOn) chosen.push(`break on ${last.breakOn.join(', ') || 'nothing'}`);
  const keep = { label: "Use the config's settings", choice: 'config' as const };
  const again = { label: 'Use my last settings', description: chosen.join(', '), choice: 'last' as const };
  const change = {
    label: 'Advanced…',
    description: 'steps, warmup, LR factor, batch tokens, health checks',
    choice: 'edit' as const,
  };
  const firsts = !chosen.length ? [keep] : fromFile ? [keep, again] : [again, keep];
  const pick = await vscode.window.showQuickPick([...firsts, change], {
    title: 'Attention Debugger: Train (3/4) — settings',
  });
  if (!pick) return undefined;
  if (pick.choice === 'config') return {};
  if (pick.choice === 'last') return last;
  const out: TrainingChoices = {};
  for (const a of ADVANCED) {
    const value = await vscode.window.showInputBox({
      title: `Attention Debugger: Train — ${a.label}`,
      prompt: `${a.hint}; empty: the config's`,
      value: last[a.key] !== undefined ? String(last[a.key]) : '',
      validateInput: (v) => {
        if (!v.trim()) return undefined;
        const n = Number(v);
        return Number.isFinite(n) && n > 0 && (!a.integer || Number.isInteger(n))
          ? undefined
          : `${a.label} must be a ${a.integer ? 'whole ' : ''}number above 0`;
      },
    });
    if (value === undefined) return undefined;
    if (value.trim()) out[a.key] = Number(value);
  }
  const breakOn = await pickBreakOn(last.breakOn);
  if (breakOn) out.breakOn = breakOn;
  return out;
}

/** What each health check watches (docs/TELEMETRY.md), for the Break on question. */
const CHECK_HINTS: Record<(typeof HEALTH_CHECKS)[number], string> = {
  nonfinite: 'a NaN or infinite loss or gradient (breaks by default)',
  loss_spike: 'one step far above the recent losses',
  entropy_collapse: "a head's attention collapsing onto one key",
  dead_head: 'a head whose gradients and outputs vanish',
  mask_leak: 'the decoder seeing future tokens',
  padding_leak: 'attention on padding',
  divergence: 'the loss far above its early level, or validation rising: ends the run diverged',
};

/**
 * The Advanced step's last question: which checks stop training (picked: break; the others warn).
 * Nothing answered (Escape) keeps the config's and the `attentionDebugger.checks` setting's modes.
 */
async function pickBreakOn(last?: CheckName[]): Promise<CheckName[] | undefined> {
  const setting = checksSetting().checks ?? {};
  const breaks = last ?? HEALTH_CHECKS.filter((c) => (setting[c] ?? DEFAULT_CHECK_MODES[c]) === 'break');
  const items = HEALTH_CHECKS.map((c) => ({ label: c, description: CHECK_HINTS[c], picked: breaks.includes(c) }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Attention Debugger: Train — Break on',
    placeHolder: 'Health checks that stop training when they fire (the others warn)',
    canPickMany: true,
  });
  return picked?.map((p) => p.label);
}

/**
 * A run folder: the live or selected one, or picked from the run folder (or browsed to), newest
 * first, `first` (when given) ahead of them. With no run anywhere it says so and offers Train.
 */
export async function pickRun(
  ctx: Ctx,
  title: string,
  preferCurrent = true,
  first?: string,
): Promise<string | undefined> {
  const current = ctx.training.runDir ?? ctx.viewer.selection?.runDir;
  const root = runsRoot();
  const runs = root ? listRuns(root).map((r) => r.dir) : [];
  if (current && !runs.includes(current)) runs.unshift(current);
  if (first) runs.splice(0, runs.length, first, ...runs.filter((r) => r !== first));
  if (preferCurrent && current && runs.length === 1) return current;
  if (runs.length === 0) {
    const choice = await vscode.window.showInformationMessage(
      `Attention Debugger: there is no run yet${root ? ` in ${root}` : ''}. Train one first, or open a run folder.`,
      'Train',
      'Open Run…',
    );
    if (choice === 'Train') await vscode.commands.executeCommand('attentionDebugger.train');
    if (choice !== 'Open Run…') return undefined;
  }
  const items: (vscode.QuickPickItem & { dir?: string })[] = runs.map((dir) => ({
    label: path.basename(dir),
    description: dir === ctx.training.runDir ? 'training' : dir === current ? 'selected' : '',
    detail: dir,
    dir,
  }));
  items.push({ label: 'Browse…', description: 'a run folder or a checkpoint folder' });
  const pick = runs.length ? await vscode.window.showQuickPick(items, { title }) : items[items.length - 1];
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

type Shape = { heads: number; encoder_layers: number; decoder_layers: number };

/** The model's shape from a run's config.json (read here, before the engine is asked). */
function readShape(runDir: string): Shape {
  const file = path.join(runDir, RUN_FILES.config);
  const c = readJsonFile(file) as Partial<Shape>;
  if (![c.heads, c.encoder_layers, c.decoder_layers].every((n) => Number.isInteger(n)))
    throw new Error(`${file} does not give heads, encoder_layers and decoder_layers`);
  return c as Shape;
}

/** Asks for some of a run's heads by name (`cross:1.0`, from 0, as every view shows them); their ids, or undefined. */
export async function pickHeads(runDir: string, title: string): Promise<string[] | undefined> {
  const shape = readShape(runDir);
  const layers = {
    encoder_self: shape.encoder_layers,
    decoder_self: shape.decoder_layers,
    cross: shape.decoder_layers,
  };
  const items = ATTENTION_KINDS.flatMap((kind) =>
    Array.from({ length: layers[kind] * shape.heads }, (_, i) => {
      const [layer, head] = [Math.floor(i / shape.heads), i % shape.heads];
      const id = headId({ kind, layer, head });
      return { label: id, description: `${kind} layer ${layer}, head ${head} (from 0)`, id };
    }),
  );
  return (await vscode.window.showQuickPick(items, { title, canPickMany: true }))?.map((c) => c.id);
}
