/**
 * The report panels from the palette (issue 33 item 3): Show Head Importance, Show Ablation Results
 * and Check Run Folder open their panel on a run: the one given (a Runs view item, `{ runDir }`),
 * else the selected run, else the one picked. Head Importance and Pruning and Ablate Heads… open
 * theirs after computing (heads.ts, ablate.ts).
 */
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun } from '../pickers';

/** The run a report panel opens on: given, selected, or picked (undefined: none chosen). */
async function reportRun(ctx: Ctx, arg: unknown, title: string): Promise<string | undefined> {
  return runDirOf(arg) ?? ctx.viewer.selection?.runDir ?? (await pickRun(ctx, title));
}

export function showImportance(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Head Importance', async (arg?: unknown) => {
    const runDir = await reportRun(ctx, arg, 'Head importance of which run?');
    if (runDir) ctx.panels.openImportance(runDir);
    return runDir;
  });
}

export function showAblations(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Ablation Results', async (arg?: unknown) => {
    const runDir = await reportRun(ctx, arg, 'Ablation results of which run?');
    if (runDir) ctx.panels.openAblations(runDir);
    return runDir;
  });
}

export function checkRunFolder(ctx: Ctx): Cmd {
  return guarded(ctx, 'Check Run Folder', async (arg?: unknown) => {
    const runDir = await reportRun(ctx, arg, 'Check which run folder?');
    if (runDir) ctx.panels.openRunCheck(runDir);
    return runDir;
  });
}
