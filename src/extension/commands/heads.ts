/**
 * Head Importance and Pruning: which heads matter in a run's checkpoint (the engine's heads/report),
 * saved as Markdown and JSON in the run folder and shown in the Head Importance panel
 * (panels/importance/): importance of every head, the pruning curves in increasing importance and
 * at random, and how many heads can go.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { HEAD_METRIC, type HeadReport, headReportFile, nothingToLose } from '../../protocol/heads';
import { headsProgress, headsReport } from '../../protocol/methods';
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun } from '../pickers';

export interface HeadReportArgs {
  runDir?: string;
  step?: number;
  /** Test sentences for the metric (default 200). */
  limit?: number;
}

/** The report as Markdown (token-free: head ids and numbers only). */
export function headReportMarkdown(r: HeadReport): string {
  const name = HEAD_METRIC[r.metric];
  const none = nothingToLose(r);
  const total = Object.keys(r.importance).length;
  const lines = [
    `# Heads of ${path.basename(r.run)} at step ${r.step}`,
    '',
    `Checkpoint \`${r.checkpoint}\`. ${name} on ${r.sentences} test sentences (greedy).`,
    '',
    none
      ? `**Step ${r.step}: ${none}**`
      : `**${r.prunable.byImportance} of ${total} heads can go for ≤ ${r.tolerance} ${name} lost** when they are ` +
        `removed in increasing importance; in a random order (seed ${r.random.seed}), ${r.prunable.random}.`,
    '',
    '## Pruning curve',
    '',
    `| heads removed | by importance | head removed | random order | head removed |`,
    '|---:|---:|---|---:|---|',
    ...r.byImportance.map((p, i) => {
      const q = r.random.points[i]!;
      return `| ${p.removed} | ${p.metric.toFixed(2)} | ${p.head ?? '—'} | ${q.metric.toFixed(2)} | ${q.head ?? '—'} |`;
    }),
    '',
    '## Importance I_h = E|∂L/∂ξ_h| (Michel et al. 2019), ascending',
    '',
    '| head | I_h |',
    '|---|---:|',
    ...Object.entries(r.importance).map(([id, v]) => `| ${id} | ${v.toExponential(3)} |`),
    '',
  ];
  return lines.join('\n');
}

export function showHeadReport(ctx: Ctx): Cmd {
  return guarded(ctx, 'Head Importance', async (arg?: HeadReportArgs | unknown): Promise<HeadReport | undefined> => {
    const args = (arg ?? {}) as HeadReportArgs;
    const runDir = runDirOf(arg) ?? (await pickRun(ctx, 'Which run’s heads?'));
    if (!runDir) return undefined;
    const name = path.basename(runDir);
    const report = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Attention Debugger: scoring the heads of ${name}`,
        cancellable: true,
      },
      (progress, token) => {
        // The engine says each pruning point it measured: the notification counts them.
        let shown = 0;
        const sub = ctx.engine.onNotification(headsProgress, (p) => {
          if (p.runDir !== runDir || p.total === 0) return;
          progress.report({
            message: `${p.done} of ${p.total} pruning points (importance done)`,
            increment: (100 * (p.done - shown)) / p.total,
          });
          shown = p.done;
        });
        progress.report({ message: 'importance of every head…' });
        const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
        const asked = ctx.engine.request(
          headsReport,
          {
            runDir,
            ...(args.step !== undefined ? { step: args.step } : {}),
            ...(args.limit !== undefined ? { limit: args.limit } : {}),
          },
          token,
        );
        return Promise.race([asked, cancelled]).finally(() => sub.dispose());
      },
    );
    if (!report) return undefined; // cancelled
    // Saved in the run folder and shown in the Head Importance panel: a report the user can find
    // again, never an unsaved Untitled. The panel reads the JSON; its Markdown button opens the .md.
    const file = path.join(runDir, headReportFile(report.step, 'md'));
    // Whole or not at all (docs/RUN_FOLDER.md's writing rules): a temporary file renamed. The JSON
    // beside it is what Export Run Report… draws the importance and pruning curves from.
    const whole = async (to: string, text: string) => {
      const tmp = `${to}.tmp-${process.pid}-${Date.now()}`;
      await fs.promises.writeFile(tmp, text);
      await fs.promises.rename(tmp, to);
    };
    await whole(file, headReportMarkdown(report));
    await whole(path.join(runDir, headReportFile(report.step, 'json')), `${JSON.stringify(report)}\n`);
    ctx.panels.openImportance(runDir);
    return report;
  });
}
