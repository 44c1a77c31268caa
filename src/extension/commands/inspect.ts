/** Decode, Show Checkpoint Attention and Inspect Head: attention of the selected run, on demand. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  ATTENTION_KINDS,
  type Attention,
  type AttentionKind,
  headId,
  type HeadRef,
  parseHeadId,
} from '../../protocol/attention';
import type { BeamTreeView } from '../../protocol/beamTree';
import type { Decoded } from '../../protocol/decoded';
import { beamTreeGet } from '../../protocol/methods';
import { type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { pickRun } from '../pickers';

export interface DecodeArgs {
  runDir?: string;
  /** The checkpoint's step (the newest by default). */
  step?: number;
  text?: string;
  beam?: number;
}

export interface InspectArgs extends Partial<HeadRef> {
  runDir?: string;
}

/** The sentence to decode: given, the editor's selection, or asked for. */
async function sentenceFor(runDir: string, given: string | undefined, what: string): Promise<string | undefined> {
  if (given !== undefined) return given;
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  return (
    selected.trim() ||
    (await vscode.window.showInputBox({
      title: `Attention Debugger: ${what} with ${path.basename(runDir)}`,
      prompt: 'A source sentence to translate (token ids separated by spaces for a run without vocab.json)',
    }))
  );
}

/**
 * Translates a sentence (the editor's selection, or asked) with a run's checkpoint and shows its
 * attention: an input at that checkpoint, never a step of the training history.
 */
export function decodeSentence(ctx: Ctx): Cmd {
  return guarded(
    ctx,
    'Decode',
    async (arg?: DecodeArgs | unknown): Promise<(Decoded & { payload: Attention }) | undefined> => {
      const args = (arg ?? {}) as DecodeArgs;
      const runDir = runDirOf(arg) ?? (await pickRun(ctx, 'Decode with which run?'));
      if (!runDir) return undefined;
      const text = await sentenceFor(runDir, args.text, 'Decode');
      if (text === undefined) return undefined; // cancelled; an empty or blank sentence is refused, saying so
      const r = await ctx.viewer.selectInput({ kind: 'text', src: text }, args.step, runDir);
      ctx.panels.openAttention();
      if (!r?.decoded) return undefined;
      const see = 'Show Beam Tree';
      void vscode.window
        .showInformationMessage(`Attention Debugger: “${text}” → “${r.decoded.text}”`, see)
        .then((choice) => {
          if (choice === see)
            void vscode.commands.executeCommand('attentionDebugger.beamTree', { ...args, runDir, text });
        });
      return { ...r.decoded, payload: r.attention };
    },
  );
}

/**
 * Shows a sentence's beam search as a tree (the Beam Tree panel): every hypothesis the search
 * looked at, the chosen path, greedy's path and the n-best; a click on a node shows its attention.
 */
export function showBeamTree(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Beam Tree', async (arg?: DecodeArgs | unknown): Promise<BeamTreeView | undefined> => {
    const args = (arg ?? {}) as DecodeArgs;
    const runDir = runDirOf(arg) ?? (await pickRun(ctx, 'Beam search with which run?'));
    if (!runDir) return undefined;
    const text = await sentenceFor(runDir, args.text, 'Beam Tree');
    if (!text) return undefined;
    const tree = await ctx.engine.request(beamTreeGet, {
      runDir,
      input: { kind: 'text', src: text },
      ...(args.step !== undefined ? { step: args.step } : {}),
      ...(args.beam !== undefined ? { beam: args.beam } : {}),
    });
    ctx.panels.openBeamTree(tree);
    return tree;
  });
}

/** A checkpoint clicked in the Runs view: the run selected at that step, the probe's attention shown. */
export function showCheckpoint(ctx: Ctx): Cmd {
  return guarded(ctx, 'Show Checkpoint', async (args: { runDir: string; step: number }) => {
    await ctx.viewer.selectRun(args.runDir, { step: args.step });
    ctx.panels.showCursor(args.step);
    ctx.panels.openAttention();
    return ctx.panels.store.attention ?? undefined;
  });
}

const KIND_HINTS: Record<AttentionKind, string> = {
  encoder_self: 'source → source',
  decoder_self: 'target → earlier target',
  cross: 'target → source',
};

/** Asks for one of `n` (counted from 0, as every view counts layers and heads); `name` describes each. */
async function pickIndex(what: string, n: number, name?: (i: number) => string): Promise<number | undefined> {
  if (n <= 1) return 0;
  const items = Array.from({ length: n }, (_, i) => ({ label: `${what} ${i}`, description: name?.(i) ?? '', i }));
  return (await vscode.window.showQuickPick(items, { title: `${what} (0–${n - 1})` }))?.i;
}

/** Which run to inspect: the one given, else the selection, asking when another run trains too. */
async function inspectedRun(ctx: Ctx, given: string | undefined): Promise<string | undefined> {
  if (given) return given;
  const selected = ctx.viewer.selection?.runDir;
  const live = ctx.training.runDir;
  if (selected && live && live !== selected) {
    const items = [selected, live].map((dir) => ({
      label: path.basename(dir),
      description: dir === live ? 'training' : 'selected',
      detail: dir,
      dir,
    }));
    return (await vscode.window.showQuickPick(items, { title: 'Inspect a head of which run?' }))?.dir;
  }
  return selected ?? live ?? (await pickRun(ctx, 'Inspect a head of which run?'));
}

/** Opens one head in the inspector with its run's probe history. */
export function inspectHead(ctx: Ctx): Cmd {
  return guarded(ctx, 'Inspect Head', async (arg?: InspectArgs | unknown) => {
    const args = (arg ?? {}) as InspectArgs;
    const runDir = await inspectedRun(ctx, runDirOf(arg));
    if (!runDir) return undefined;
    if (ctx.viewer.selection?.runDir !== runDir) await ctx.viewer.selectRun(runDir);
    const summary = ctx.viewer.run!;
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
    const head = args.head ?? (await pickIndex('Head', summary.heads, (i) => headId({ kind, layer, head: i })));
    if (head === undefined) return undefined;
    if (layer >= layers || head >= summary.heads)
      throw new Error(
        `${headId({ kind, layer, head })} does not exist: ${kind} has layers 0–${layers - 1} and heads 0–${summary.heads - 1}`,
      );
    const ref: HeadRef = { kind, layer, head };
    ctx.viewer.selectHead(ref);
    ctx.panels.openHeadInspector(ref);
    return { head: ref, runDir, snapshots: ctx.panels.store.snapshots.length };
  });
}

/** A breakpoint's "Open Head": its run selected at the step it paused, the head in the inspector. */
export function openBreakpoint(ctx: Ctx): Cmd {
  return guarded(ctx, 'Open Head', async (args: { runDir: string; event: { step: number; head?: string } }) => {
    await ctx.viewer.selectRun(args.runDir, { step: args.event.step });
    ctx.panels.showCursor(args.event.step);
    const ref = args.event.head ? parseHeadId(args.event.head) : undefined;
    if (!ref) return undefined;
    ctx.viewer.selectHead(ref);
    ctx.panels.openHeadInspector(ref);
    return ref;
  });
}

/** Opens the Heads panel: a telemetry statistic per head over the selected run's training. */
export function openHeads(ctx: Ctx): Cmd {
  return () => void ctx.panels.openHeads();
}
