/**
 * Ablate Heads…: what removing some heads costs a run on its test split (ablation/score): the
 * metric of the checkpoint as trained and with the heads zero- or mean-ablated, decoded greedily.
 * Each score is kept in the run folder (ablations.json) and shown as a row of the Ablation Results
 * panel (panels/ablations/), which opens on the run.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ABLATION_MODES, type AblationMode, type AblationScore, describeAblation } from '../../protocol/ablation';
import { ablationScore } from '../../protocol/methods';
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { AblationsPanel } from '../panels';
import { saveAblation } from '../panels/ablations/saved';
import { pickHeads, pickRun } from '../pickers';

export interface AblateArgs {
  runDir?: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  heads?: string[];
  mode?: AblationMode;
  /** Test sentences to decode (default 200). */
  limit?: number;
}

const MODES: Record<AblationMode, string> = {
  zero: 'remove their output before W^O (ξ = 0)',
  mean: 'replace their output by its mean over the run’s probe batch',
};

/** `exact match 96.0 → 41.5 (−54.5)`: a score as the message shows it. */
function describeScore(s: AblationScore): string {
  const what = s.metric === 'bleu' ? 'BLEU' : 'exact match';
  const delta = s.ablated - s.intact;
  return `${what} ${s.intact.toFixed(1)} → ${s.ablated.toFixed(1)} (${delta >= 0 ? '+' : '−'}${Math.abs(delta).toFixed(1)})`;
}

export function ablateHeads(ctx: Ctx): Cmd {
  return guarded(ctx, 'Ablate Heads', async (arg?: unknown): Promise<AblationScore | undefined> => {
    const args = (arg ?? {}) as AblateArgs;
    // From the palette it asks which run (the selected one first), never taking it silently.
    const runDir =
      runDirOf(arg) ?? (await pickRun(ctx, 'Ablate heads of which run?', false, ctx.viewer.selection?.runDir));
    if (!runDir) return undefined;
    const name = path.basename(runDir);
    const heads = args.heads ?? (await pickHeads(runDir, `Ablate which heads of ${name}?`));
    if (!heads?.length) return undefined;
    const mode =
      args.mode ??
      (
        await vscode.window.showQuickPick(
          ABLATION_MODES.map((m) => ({ label: m, description: MODES[m] })),
          { title: `Ablate ${heads.length} head${heads.length > 1 ? 's' : ''}: how?` },
        )
      )?.label;
    if (!mode) return undefined;
    const ablation = { heads, mode };
    const score = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Attention Debugger: decoding ${name}'s test split with and without ${heads.join(', ')}…`,
      },
      () =>
        ctx.engine.request(ablationScore, {
          runDir,
          ablation,
          ...(args.step !== undefined ? { step: args.step } : {}),
          ...(args.limit !== undefined ? { limit: args.limit } : {}),
        }),
    );
    // The numbers first (a toast shows its first line or so); where they come from after them and in the log.
    const details =
      `${name} at step ${score.step}, ${describeAblation(ablation)}: ${describeScore(score)} ` +
      `on ${score.sentences} test sentences (greedy)`;
    ctx.log(`Ablate Heads: ${details}`);
    void vscode.window.showInformationMessage(
      `${describeScore(score)} with ${heads.join(', ')} ${mode}-ablated ` +
        `· ${name}, step ${score.step}, ${score.sentences} test sentences`,
    );
    // A row of the Ablation Results panel, kept in the run folder; a folder that does not take it
    // (read-only, or an ablations.json that does not read) keeps it for this window only.
    const record = { ...score, runDir, time: Date.now() };
    try {
      await saveAblation(runDir, record);
    } catch (err) {
      ctx.log(`Ablate Heads: not saved in ${runDir}: ${(err as Error).message}`);
      AblationsPanel.keepUnsaved(runDir, record);
    }
    ctx.panels.openAblations(runDir);
    return score;
  });
}
