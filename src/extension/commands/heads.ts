/**
 * Head Importance and Pruning: which heads matter in a run's checkpoint (the engine's heads/report),
 * shown as a Markdown document beside the editor: importance of every head, the pruning curves in
 * increasing importance and at random, and how many heads can go.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HeadReport } from '../../protocol/heads';
import { headsReport } from '../../protocol/training';
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun } from '../pickers';

export interface HeadReportArgs {
  runDir?: string;
  step?: number;
  /** Test sentences for the metric (default 200). */
  limit?: number;
}

const METRIC = { exact_match_percent: 'exact match (%)', bleu: 'BLEU' };

/** The report as Markdown (token-free: head ids and numbers only). */
export function headReportMarkdown(r: HeadReport): string {
  const name = METRIC[r.metric];
  const total = Object.keys(r.importance).length;
  const lines = [
    `# Heads of ${path.basename(r.run)} at step ${r.step}`,
    '',
    `Checkpoint \`${r.checkpoint}\`. ${name} on ${r.sentences} test sentences (greedy). ` +
      'Markdown: Open Preview to the Side (Ctrl+K V) renders these tables.',
    '',
    `**${r.prunable.byImportance} of ${total} heads can go for ≤ ${r.tolerance} ${name} lost** when they are removed ` +
      `in increasing importance; in a random order (seed ${r.random.seed}), ${r.prunable.random}.`,
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
    const report = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Window,
        title: `Attention Debugger: scoring the heads of ${path.basename(runDir)} (importance, then pruning curves)`,
      },
      () =>
        ctx.engine.request(headsReport, {
          runDir,
          ...(args.step !== undefined ? { step: args.step } : {}),
          ...(args.limit !== undefined ? { limit: args.limit } : {}),
        }),
    );
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: headReportMarkdown(report) });
    // The Markdown source reads as tables already; the rendered preview is one command away.
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    return report;
  });
}
