/**
 * Show Global Q/K View: one head's queries and keys over the run's validation split in 2-D (the
 * Global Q/K panel, panels/global/). The run: given, selected, or picked; the head: given, the
 * head the inspector or a grid last selected, or picked. Open Pair at Step (hidden): what a click
 * on a point does, that pair's attention at that step in the attention view, the head selected.
 */
import * as vscode from 'vscode';
import { ATTENTION_KINDS, type Attention, type HeadRef, headId, type PairWords } from '../../protocol/attention';
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun } from '../pickers';

export interface GlobalViewArgs extends Partial<HeadRef> {
  runDir?: string;
  /** The checkpoint shown first (the newest when absent). */
  step?: number;
}

export interface GlobalPairArgs {
  runDir: string;
  step: number;
  /** Source ids (ending with EOS) and target ids (without BOS), as heads/global gives them. */
  src: number[];
  tgt: number[];
  /** Source and target as words (GlobalPair's). */
  words: PairWords;
  head: HeadRef;
}

/** Every head of the selected run, to pick one. */
async function pickHead(ctx: Ctx): Promise<HeadRef | undefined> {
  const s = ctx.viewer.run;
  if (!s) return undefined;
  const items = ATTENTION_KINDS.flatMap((kind) =>
    Array.from({ length: kind === 'encoder_self' ? s.encoderLayers : s.decoderLayers }, (_, layer) =>
      Array.from({ length: s.heads }, (_, head) => ({
        label: headId({ kind, layer, head }),
        ref: { kind, layer, head },
      })),
    ).flat(),
  );
  return (await vscode.window.showQuickPick(items, { title: 'Global Q/K view of which head?' }))?.ref;
}

export function showGlobalView(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Global Q/K View', async (arg?: GlobalViewArgs | unknown) => {
    const args = (arg ?? {}) as GlobalViewArgs;
    const runDir =
      runDirOf(arg) ?? ctx.viewer.selection?.runDir ?? (await pickRun(ctx, 'Queries and keys of which run?'));
    if (!runDir) return undefined;
    if (ctx.viewer.selection?.runDir !== runDir) await ctx.viewer.selectRun(runDir);
    const given =
      args.kind !== undefined && args.layer !== undefined && args.head !== undefined
        ? { kind: args.kind, layer: args.layer, head: args.head }
        : undefined;
    const head = given ?? ctx.viewer.selection?.head ?? (await pickHead(ctx));
    if (!head) return undefined;
    ctx.panels.openGlobal(runDir, head, args.step);
    return { runDir, head };
  });
}

export function openGlobalPair(ctx: Ctx): Cmd {
  return guarded(ctx, 'Open Pair at Step', async (a: GlobalPairArgs): Promise<Attention | undefined> => {
    const shown = await ctx.viewer.selectInput(
      { kind: 'ids', src: a.src, tgt: a.tgt, words: a.words },
      a.step,
      a.runDir,
    );
    ctx.viewer.selectHead(a.head);
    ctx.panels.showCursor(a.step);
    ctx.panels.openAttention();
    return shown?.attention;
  });
}
