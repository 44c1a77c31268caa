/**
 * Fork From Here…: a new run from one checkpoint of a run, with heads frozen, masked or
 * re-initialised and the learning rate, warmup, dropout or label smoothing changed (train/fork).
 * The fork trains at once; the dashboard draws it over its parent, whose curves it continues.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ATTENTION_KINDS, headId } from '../../protocol/attention';
import type { ForkParams } from '../../protocol/fork';
import { RUN_FILES } from '../../protocol/runFolder';
import type { RunSummary } from '../../protocol/training';
import { absolute, type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun, stamp } from '../pickers';
import { listCheckpoints, runsRoot } from '../views';
import { trusted } from './training';

/** What Fork asks; a field given here is not asked (tests and other extensions answer them all). */
export type ForkArgs = Partial<Omit<ForkParams, 'parent' | 'runDir'>> & {
  /** The parent run (a checkpoint node of the Runs view gives it with `step`). */
  runDir?: string;
  /** The fork's folder. */
  forkDir?: string;
};

type Shape = { heads: number; encoder_layers: number; decoder_layers: number };

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

/** Every head of the run, as quick-pick items (shown from 1, as every view shows them). */
function headItems(shape: Shape): { label: string; id: string }[] {
  const layers = {
    encoder_self: shape.encoder_layers,
    decoder_self: shape.decoder_layers,
    cross: shape.decoder_layers,
  };
  return ATTENTION_KINDS.flatMap((kind) =>
    Array.from({ length: layers[kind] * shape.heads }, (_, i) => {
      const [layer, head] = [Math.floor(i / shape.heads), i % shape.heads];
      return { label: `${kind} layer ${layer + 1} head ${head + 1}`, id: headId({ kind, layer, head }) };
    }),
  );
}

async function askNumber(title: string, what: string, check: (n: number) => boolean): Promise<number | undefined> {
  const v = await vscode.window.showInputBox({
    title,
    validateInput: (t) => (t.trim() && check(Number(t)) ? undefined : `expected ${what}`),
  });
  return v === undefined ? undefined : Number(v);
}

/** Asks which changes, then each one; undefined when cancelled. */
async function askChanges(shape: Shape, step: number, name: string): Promise<Partial<ForkParams> | undefined> {
  const picks = await vscode.window.showQuickPick(
    [...HEAD_CHANGES, ...NUMBER_CHANGES].map((c) => ({ ...c, detail: 'detail' in c ? c.detail : undefined })),
    { title: `Fork ${name} at step ${step}: what changes?`, canPickMany: true },
  );
  if (!picks) return undefined;
  const out: Partial<ForkParams> = {};
  for (const pick of picks) {
    const heads = HEAD_CHANGES.find((c) => c.key === pick.key);
    if (heads) {
      const chosen = await vscode.window.showQuickPick(headItems(shape), {
        title: `Fork: ${pick.label.replace('…', '')}`,
        canPickMany: true,
      });
      if (!chosen?.length) return undefined;
      out[heads.key] = chosen.map((c) => c.id);
      continue;
    }
    const n = NUMBER_CHANGES.find((c) => c.key === pick.key)!;
    const value = await askNumber(`Fork: ${n.label.replace('…', '')}`, n.what, n.check);
    if (value === undefined) return undefined;
    out[n.key] = value;
  }
  return out;
}

/** The model's shape from the run's config.json (asked before the engine is). */
function readShape(runDir: string): Shape {
  const file = path.join(runDir, RUN_FILES.config);
  const c = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Shape>;
  if (![c.heads, c.encoder_layers, c.decoder_layers].every((n) => Number.isInteger(n)))
    throw new Error(`${file} does not give heads, encoder_layers and decoder_layers`);
  return c as Shape;
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
    const changes = scripted ? args : await askChanges(readShape(parent), step, name);
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
