/**
 * Fork From Here…: a new run from one checkpoint of a run, with heads frozen, masked or
 * re-initialised and the learning rate, warmup, dropout or label smoothing changed (train/fork).
 * The fork trains at once; the dashboard draws it over its parent, whose curves it continues.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ForkParams } from '../../protocol/fork';
import type { RunSummary } from '../../protocol/training';
import { absolute, type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickHeads, pickRun, stamp } from '../pickers';
import { listCheckpoints, runsRoot } from '../views';
import { trusted } from './training';

/** What Fork asks; a field given here is not asked (tests and other extensions answer them all). */
export type ForkArgs = Partial<Omit<ForkParams, 'parent' | 'runDir'>> & {
  /** The parent run (a checkpoint node of the Runs view gives it with `step`). */
  runDir?: string;
  /** The fork's folder. */
  forkDir?: string;
};

const HEAD_CHANGES = [
  { label: 'Freeze heads…', key: 'freezeHeads', detail: 'their weights get no updates' },
  { label: 'Mask heads…', key: 'maskHeads', detail: 'their output is removed before W^O (ξ = 0) while training' },
  { label: 'Re-initialise heads…', key: 'reinitHeads', detail: 'their weights are drawn afresh' },
] as const;
const NUMBER_CHANGES = [
  { label: 'Learning-rate factor…', key: 'lrFactor', check: (n: number) => n > 0, what: 'a positive number' },
  { label: 'Warmup steps…', key: 'warmup', check: (n: number) => Number.isInteger(n) && n >= 1, what: 'steps ≥ 1' },
  { label: 'Dropout…', key: 'dropout', check: (n: number) => n >= 0 && n < 1, what: 'a number in [0, 1)' },
  {
    label: 'Label smoothing…',
    key: 'labelSmoothing',
    check: (n: number) => n >= 0 && n < 1,
    what: 'a number in [0, 1)',
  },
] as const;

async function askNumber(title: string, what: string, check: (n: number) => boolean): Promise<number | undefined> {
  const v = await vscode.window.showInputBox({
    title,
    validateInput: (t) => (t.trim() && check(Number(t)) ? undefined : `expected ${what}`),
  });
  return v === undefined ? undefined : Number(v);
}

/** Asks which changes, then each one; undefined when cancelled. */
async function askChanges(parent: string, step: number, name: string): Promise<Partial<ForkParams> | undefined> {
  const picks = await vscode.window.showQuickPick(
    [...HEAD_CHANGES, ...NUMBER_CHANGES].map((c) => ({ ...c, detail: 'detail' in c ? c.detail : undefined })),
    { title: `Fork ${name} at step ${step}: what changes?`, canPickMany: true },
  );
  if (!picks) return undefined;
  const out: Partial<ForkParams> = {};
  for (const pick of picks) {
    const heads = HEAD_CHANGES.find((c) => c.key === pick.key);
    if (heads) {
      const chosen = await pickHeads(parent, `Fork: ${pick.label.replace('…', '')}`);
      if (!chosen?.length) return undefined;
      out[heads.key] = chosen;
      continue;
    }
    const n = NUMBER_CHANGES.find((c) => c.key === pick.key)!;
    const value = await askNumber(`Fork: ${n.label.replace('…', '')}`, n.what, n.check);
    if (value === undefined) return undefined;
    out[n.key] = value;
  }
  return out;
}

export function forkRun(ctx: Ctx): Cmd {
  return guarded(ctx, 'Fork', async (arg?: unknown): Promise<RunSummary | undefined> => {
    if (!(await trusted('Forking a run'))) return undefined;
    const args = (arg ?? {}) as ForkArgs;
    const parent = runDirOf(arg) ?? (await pickRun(ctx, 'Fork which run?'));
    if (!parent) return undefined;
    const name = path.basename(parent);
    let step = args.step;
    if (step === undefined) {
      const items = listCheckpoints(parent).map((c) => ({ label: `step ${c.step}`, step: c.step }));
      if (!items.length) throw new Error(`${name} has no checkpoint to fork from yet`);
      step = (await vscode.window.showQuickPick(items, { title: `Fork ${name} from which checkpoint?` }))?.step;
      if (step === undefined) return undefined;
    }
    const scripted = Object.keys(args).some((k) => !['runDir', 'step', 'kind', 'file', 'forkDir'].includes(k));
    const changes = scripted ? args : await askChanges(parent, step, name);
    if (!changes) return undefined;
    const steps =
      changes.steps ??
      (await askNumber(
        `Fork: train to which step? (it starts at ${step})`,
        `a whole number past ${step}`,
        (n) => Number.isInteger(n) && n > step,
      ));
    if (steps === undefined) return undefined;
    const suggested = path.join(runsRoot() ?? path.dirname(parent), `${name}-fork${step}-${stamp()}`);
    const forkDir = args.forkDir ?? (await vscode.window.showInputBox({ title: 'Fork: run folder', value: suggested }));
    if (!forkDir) return undefined;
    const { freezeHeads, maskHeads, reinitHeads, lrFactor, warmup, dropout, labelSmoothing } = changes;
    const params: ForkParams = {
      parent,
      step,
      runDir: absolute(forkDir),
      steps,
      ...Object.fromEntries(
        Object.entries({ freezeHeads, maskHeads, reinitHeads, lrFactor, warmup, dropout, labelSmoothing }).filter(
          ([, v]) => v !== undefined,
        ),
      ),
    };
    const summary = await ctx.training.fork(params);
    await vscode.commands.executeCommand('attentionDebugger.compareRuns', { runDirs: [parent] });
    ctx.refreshRuns();
    void vscode.window.showInformationMessage(
      `Attention Debugger: ${path.basename(params.runDir)} forks ${name} at step ${step} and trains to ${steps}; ` +
        'the dashboard draws it over its parent.',
    );
    return summary;
  });
}
