/** Decode, Show Checkpoint Attention and Inspect Head: attention of a run, on demand. */
import * as vscode from 'vscode';
import { ATTENTION_KINDS, type Attention, type AttentionKind, type HeadRef } from '../../protocol/attention';
import { type DecodeResult, decode, runOpen, snapshotsGet } from '../../protocol/training';
import { toAttention } from '../convert';
import { type Cmd, type Ctx, errorText, guarded } from '../ctx';
import { pickRun } from '../pickers';

export interface DecodeArgs {
  runDir?: string;
  checkpoint?: string;
  text?: string;
  beam?: number;
}

export interface InspectArgs extends Partial<HeadRef> {
  runDir?: string;
}

/** The probe pair's attention at a run's snapshot steps (all of them without `steps`). */
export async function loadSnapshots(ctx: Ctx, runDir: string, steps?: number[]): Promise<Attention[]> {
  const wire = await ctx.engine.request(snapshotsGet, steps ? { runDir, steps } : { runDir });
  const items: Attention[] = [];
  for (const [i, w] of wire.entries()) {
    try {
      items.push(toAttention(w, `snapshots/get result[${i}]`));
    } catch (err) {
      ctx.log(`snapshot ignored: ${errorText(err)}`);
    }
  }
  return items;
}

async function decodeRun(
  ctx: Ctx,
  args: DecodeArgs & { runDir: string; text: string },
): Promise<DecodeResult & { payload: Attention }> {
  const result = await ctx.engine.request(decode, {
    runDir: args.runDir,
    text: args.text,
    ...(args.checkpoint ? { checkpoint: args.checkpoint } : {}),
    ...(args.beam ? { beam: args.beam } : {}),
  });
  const payload = toAttention(result.attention, 'decode result.attention');
  ctx.panels.showAttention(payload);
  ctx.panels.openAttention();
  return { ...result, payload };
}

/** Translates a sentence (the editor's selection, or asked) and shows its attention. */
export function decodeSentence(ctx: Ctx): Cmd {
  return guarded(ctx, 'Decode', async (args: DecodeArgs = {}) => {
    let text = args.text;
    if (text === undefined) {
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
      text =
        selected.trim() ||
        (await vscode.window.showInputBox({
          title: 'Attention Debugger: Decode',
          prompt: 'A source sentence to translate',
        }));
    }
    if (!text) return undefined;
    const runDir = args.runDir ?? (await pickRun(ctx, 'Decode with which run?'));
    if (!runDir) return undefined;
    const result = await decodeRun(ctx, { ...args, runDir, text });
    void vscode.window.showInformationMessage(`Attention Debugger: “${text}” → “${result.text}”`);
    return result;
  });
}

/** A checkpoint clicked in the Runs view: the probe's attention at that step, or a sentence decoded with it. */
export function showCheckpoint(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Checkpoint', async (args: { runDir: string; checkpoint: string; step: number }) => {
    const snaps = await loadSnapshots(ctx, args.runDir, [args.step]);
    const snap = snaps.find((s) => s.source.step === args.step) ?? snaps[snaps.length - 1];
    if (snap) {
      ctx.panels.showAttention(snap);
      ctx.panels.openAttention();
      return snap;
    }
    const text = await vscode.window.showInputBox({
      title: `No snapshot at step ${args.step}: decode a sentence with this checkpoint`,
      prompt: 'A source sentence',
    });
    if (!text) return undefined;
    return (await decodeRun(ctx, { runDir: args.runDir, checkpoint: args.checkpoint, text })).payload;
  });
}

const KIND_HINTS: Record<AttentionKind, string> = {
  encoder_self: 'source → source',
  decoder_self: 'target → earlier target',
  cross: 'target → source',
};

async function pickIndex(what: string, n: number): Promise<number | undefined> {
  if (n <= 1) return 0;
  const items = Array.from({ length: n }, (_, i) => ({ label: `${what} ${i + 1}`, i }));
  return (await vscode.window.showQuickPick(items, { title: `${what} (of ${n})` }))?.i;
}

/** Opens one head in the inspector with the run's snapshot history. */
export function inspectHead(ctx: Ctx): Cmd {
  return guarded(ctx, 'Inspect Head', async (args: InspectArgs = {}) => {
    const { training, panels, engine } = ctx;
    const runDir =
      args.runDir ??
      training.runDir ??
      training.summary?.runDir ??
      (await pickRun(ctx, 'Inspect a head of which run?'));
    if (!runDir) return undefined;
    const summary =
      training.summary?.runDir === runDir ? training.summary : (await engine.request(runOpen, { runDir })).summary;
    const kind: AttentionKind | undefined =
      args.kind ??
      ((
        await vscode.window.showQuickPick(
          ATTENTION_KINDS.map((k) => ({ label: k, description: KIND_HINTS[k] })),
          { title: 'Attention kind' },
        )
      )?.label as AttentionKind | undefined);
    if (!kind) return undefined;
    const layers = kind === 'encoder_self' ? summary.encoderLayers : summary.decoderLayers;
    const layer = args.layer ?? (await pickIndex('Layer', layers));
    if (layer === undefined) return undefined;
    const head = args.head ?? (await pickIndex('Head', summary.heads));
    if (head === undefined) return undefined;
    if (layer >= layers || head >= summary.heads)
      throw new Error(
        `${kind} has ${layers} layers and ${summary.heads} heads; layer ${layer + 1}, head ${head + 1} do not exist`,
      );
    const snaps = await loadSnapshots(ctx, runDir);
    panels.store.addSnapshots(snaps, true);
    const newest = snaps[snaps.length - 1];
    if (newest && !panels.store.attention) panels.showAttention(newest);
    const ref: HeadRef = { kind, layer, head };
    panels.openHeadInspector(ref);
    return { head: ref, snapshots: snaps.length };
  });
}
