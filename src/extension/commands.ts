/**
 * The command table (after rust-analyzer's createCommands): one entry per command id, each a
 * function of the shared context. Which commands show in the palette is decided by package.json
 * `when` clauses on the context keys TrainingSession sets (no run training → no Stop); each handler
 * also checks the state itself, since a command can be run from anywhere.
 *
 * Every command takes an optional argument object that answers its questions (run folder, data,
 * text, head, file), so tests and other extensions can run it without any UI; whatever is missing
 * is asked with quick picks, input boxes and folder pickers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type EngineInfo, engineInfo } from '../protocol/engine';
import {
  type DataChoice,
  type DecodeResult,
  type RunSummary,
  decode,
  positional,
  runOpen,
  snapshotsGet,
} from '../protocol/training';
import {
  ATTENTION_KINDS,
  type AttentionKind,
  type AttentionPayload,
  EXPORT_FORMATS,
  type ExportFormat,
  type HeadRef,
  type PanelKind,
} from '../protocol/webview';
import { toAttentionPayload, toPositionalPayload } from './convert';
import type { EngineClient } from './engineClient';
import { PANEL_SLOTS, type Panels } from './panels';
import { askSaveTarget, NOT_SHOWN } from './panels/base';
import { scheduleOf, type TrainingSession } from './training';
import { runsRoot } from './views';
import { activePanelKind, exportText, panelOf } from './exportView';
import { dataLabel, pickConfig, pickData, pickRun, stamp } from './pickers';
import { settings } from './settings';
export { CONFIG_PRESETS } from './settings';

export interface Ctx {
  readonly engine: EngineClient;
  readonly panels: Panels;
  readonly training: TrainingSession;
  readonly log: (line: string) => void;
  readonly refreshRuns: () => void;
}

export interface TrainArgs {
  data?: DataChoice;
  /** tiny | small | base | big, or a JSON config file. */
  config?: string;
  runDir?: string;
  steps?: number;
  /** Open the dashboard and the attention view (default true). */
  openPanels?: boolean;
  /** Show the cancellable progress notification (default true). */
  progress?: boolean;
}
export interface DecodeArgs {
  runDir?: string;
  checkpoint?: string;
  text?: string;
  beam?: number;
}
export interface InspectArgs extends Partial<HeadRef> {
  runDir?: string;
}
export interface ExportArgs {
  panel?: PanelKind;
  format?: ExportFormat;
  /** Where to write; asked with a save dialog when missing. */
  path?: string;
}

type Command = (...args: any[]) => unknown; // eslint-disable-line @typescript-eslint/no-explicit-any

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `fn`; an error is logged and shown, and the command returns undefined. */
function guarded<A extends unknown[], R>(
  ctx: Ctx,
  name: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R | undefined> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      ctx.log(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      void vscode.window.showErrorMessage(`Attention Debugger: ${name} failed: ${errorText(err)}`);
      return undefined;
    }
  };
}

export function createCommands(ctx: Ctx): Record<string, Command> {
  const { engine, panels, training, log } = ctx;

  const showRun = (summary: RunSummary, rows: Parameters<Panels['appendMetrics']>[0]): void => {
    panels.appendMetrics(rows, true);
    panels.setSchedule(scheduleOf(summary));
    training.setOpened(summary);
  };

  const loadSnapshots = async (runDir: string, steps?: number[]): Promise<AttentionPayload[]> => {
    const wire = await engine.request(snapshotsGet, steps ? { runDir, steps } : { runDir });
    const items: AttentionPayload[] = [];
    for (const [i, w] of wire.entries()) {
      try {
        items.push(toAttentionPayload(w, `snapshots/get result[${i}]`));
      } catch (err) {
        log(`snapshot ignored: ${errorText(err)}`);
      }
    }
    return items;
  };

  const decodeRun = async (
    args: DecodeArgs & { runDir: string; text: string },
  ): Promise<DecodeResult & { payload: AttentionPayload }> => {
    const result = await engine.request(decode, {
      runDir: args.runDir,
      text: args.text,
      ...(args.checkpoint ? { checkpoint: args.checkpoint } : {}),
      ...(args.beam ? { beam: args.beam } : {}),
    });
    const payload = toAttentionPayload(result.attention, 'decode result.attention');
    panels.showAttention(payload);
    panels.openAttention();
    return { ...result, payload };
  };

  return {
    'attentionDebugger.showEngineInfo': async (): Promise<EngineInfo | undefined> => {
      try {
        const info = await engine.request(engineInfo);
        void vscode.window.showInformationMessage(
          `Attention Debugger engine ${info.version}: backend ${info.backend} (available: ${info.backends.join(', ') || 'none'}); matMul: ${info.matmul}`,
        );
        return info;
      } catch (err) {
        log(`engine/info failed: ${errorText(err)}`);
        void vscode.window.showErrorMessage(`Attention Debugger: the engine did not answer: ${errorText(err)}`);
        return undefined;
      }
    },

    'attentionDebugger.train': guarded(ctx, 'Train', async (args: TrainArgs = {}): Promise<RunSummary | undefined> => {
      if (training.training) {
        void vscode.window.showWarningMessage(
          `Attention Debugger: ${path.basename(training.runDir!)} is training; stop it before starting another run.`,
        );
        return undefined;
      }
      const data = args.data ?? (await pickData());
      if (!data) return undefined;
      const config = args.config ?? (await pickConfig());
      if (!config) return undefined;
      let runDir = args.runDir;
      if (!runDir) {
        const root = runsRoot();
        const name = `${dataLabel(data)}-${path.basename(config, '.json')}-${stamp()}`;
        const value = root ? path.join(root, name) : name;
        runDir = await vscode.window.showInputBox({
          title: 'Attention Debugger: Train (3/3) — run folder',
          value,
          valueSelection: [value.length - name.length, value.length],
          prompt: 'Checkpoints, metrics and the vocabulary go here',
        });
        if (!runDir) return undefined;
      }
      const snapshotEvery = settings().get<number>('snapshotInterval') ?? 0; // 0: the config's training.snapshot_every
      const summary = await training.start({
        runDir,
        data,
        config,
        ...(args.steps ? { steps: args.steps } : {}),
        ...(snapshotEvery > 0 ? { snapshotEvery } : {}),
      });
      if (args.openPanels !== false) {
        panels.openDashboard(vscode.ViewColumn.One);
        panels.openAttention(vscode.ViewColumn.Beside);
      }
      if (args.progress !== false) training.showProgress();
      ctx.refreshRuns();
      return summary;
    }),

    'attentionDebugger.stop': guarded(ctx, 'Stop', async () => {
      if (!training.training) {
        void vscode.window.showInformationMessage('Attention Debugger: no run is training.');
        return null;
      }
      return training.stop();
    }),

    'attentionDebugger.resume': guarded(
      ctx,
      'Resume',
      async (args: { runDir?: string; steps?: number; progress?: boolean } = {}) => {
        const runDir = args.runDir ?? (await pickRun(ctx, 'Resume which run?', false));
        if (!runDir) return undefined;
        const summary = await training.resume(runDir, args.steps);
        const opened = await engine.request(runOpen, { runDir });
        panels.appendMetrics(opened.rows, true);
        panels.openDashboard();
        if (args.progress !== false) training.showProgress();
        return summary;
      },
    ),

    'attentionDebugger.decode': guarded(ctx, 'Decode', async (args: DecodeArgs = {}) => {
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
      const result = await decodeRun({ ...args, runDir, text });
      void vscode.window.showInformationMessage(`Attention Debugger: “${text}” → “${result.text}”`);
      return result;
    }),

    'attentionDebugger.showCheckpoint': guarded(
      ctx,
      'Show Checkpoint',
      async (args: { runDir: string; checkpoint: string; step: number }) => {
        const snaps = await loadSnapshots(args.runDir, [args.step]);
        const snap = snaps.find((s) => s.step === args.step) ?? snaps[snaps.length - 1];
        if (snap) {
          panels.showAttention(snap);
          panels.openAttention();
          return snap;
        }
        const text = await vscode.window.showInputBox({
          title: `No snapshot at step ${args.step}: decode a sentence with this checkpoint`,
          prompt: 'A source sentence',
        });
        if (!text) return undefined;
        return (await decodeRun({ runDir: args.runDir, checkpoint: args.checkpoint, text })).payload;
      },
    ),

    'attentionDebugger.inspectHead': guarded(ctx, 'Inspect Head', async (args: InspectArgs = {}) => {
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
            ATTENTION_KINDS.map((k) => ({
              label: k,
              description: {
                encoder_self: 'source → source',
                decoder_self: 'target → earlier target',
                cross: 'target → source',
              }[k],
            })),
            { title: 'Attention kind' },
          )
        )?.label as AttentionKind | undefined);
      if (!kind) return undefined;
      const layers = kind === 'encoder_self' ? summary.encoderLayers : summary.decoderLayers;
      const pickIndex = async (what: string, n: number): Promise<number | undefined> => {
        if (n <= 1) return 0;
        const p = await vscode.window.showQuickPick(
          Array.from({ length: n }, (_, i) => ({ label: `${what} ${i + 1}`, i })),
          { title: `${what} (of ${n})` },
        );
        return p?.i;
      };
      const layer = args.layer ?? (await pickIndex('Layer', layers));
      if (layer === undefined) return undefined;
      const head = args.head ?? (await pickIndex('Head', summary.heads));
      if (head === undefined) return undefined;
      if (layer >= layers || head >= summary.heads)
        throw new Error(
          `${kind} has ${layers} layers and ${summary.heads} heads; layer ${layer + 1}, head ${head + 1} do not exist`,
        );
      const snaps = await loadSnapshots(runDir);
      panels.store.addSnapshots(snaps, true);
      const newest = snaps[snaps.length - 1];
      if (newest && !panels.store.attention) panels.showAttention(newest);
      const ref: HeadRef = { kind, layer, head };
      panels.openHeadInspector(ref);
      return { head: ref, snapshots: snaps.length };
    }),

    'attentionDebugger.openDashboard': () => {
      panels.openDashboard();
    },
    'attentionDebugger.openAttention': () => {
      panels.openAttention();
    },

    'attentionDebugger.openRun': guarded(ctx, 'Open Run', async (args: { runDir?: string } = {}) => {
      let runDir = args.runDir;
      if (!runDir) {
        const root = runsRoot();
        const folder = await vscode.window.showOpenDialog({
          canSelectFolders: true,
          canSelectFiles: false,
          openLabel: 'Open Run',
          title: 'A run folder, or a checkpoint folder (config.json + model.safetensors) written by PyTorch',
          defaultUri: root && fs.existsSync(root) ? vscode.Uri.file(root) : undefined,
        });
        runDir = folder?.[0]?.fsPath;
      }
      if (!runDir) return undefined;
      const opened = await engine.request(runOpen, { runDir });
      if (training.runDir === opened.summary.runDir) panels.appendMetrics(opened.rows, true);
      else showRun(opened.summary, opened.rows);
      panels.openDashboard();
      return opened;
    }),

    'attentionDebugger.showPositional': guarded(
      ctx,
      'Show Positional Encoding',
      async (args: { runDir?: string; dModel?: number; positions?: number } = {}) => {
        const runDir = args.runDir ?? training.runDir ?? training.summary?.runDir;
        const params = runDir
          ? { runDir, ...(args.positions ? { positions: args.positions } : {}) }
          : { dModel: args.dModel ?? 64, positions: args.positions ?? 100 };
        const result = await engine.request(positional, params);
        const payload = toPositionalPayload(result, 'positional result');
        panels.showPositional(payload);
        panels.openPositional();
        return { shape: payload.shape, learned: result.learned };
      },
    ),

    'attentionDebugger.exportView': guarded(ctx, 'Export View', async (args: ExportArgs = {}) => {
      const kind = args.panel ?? activePanelKind();
      if (!kind) {
        void vscode.window.showInformationMessage(
          'Attention Debugger: open a panel (dashboard, attention, head inspector or positional) to export it.',
        );
        return undefined;
      }
      const format =
        args.format ??
        ((
          await vscode.window.showQuickPick(
            EXPORT_FORMATS.map((f) => ({
              label: f,
              description: f === 'png' || f === 'svg' ? 'an image of the panel' : 'the data shown',
            })),
            { title: `Export the ${kind} view as` },
          )
        )?.label as ExportFormat | undefined);
      if (!format) return undefined;
      if (format === 'png' || format === 'svg') {
        // Images are drawn in the webview: it renders one (plotly's toImage, or its canvas) and
        // sends it back as a data: URL, saved where args.path or the save dialog says.
        const panel = panelOf(kind);
        if (!panel) throw new Error(`the ${kind} panel is not open`);
        const target = args.path ? vscode.Uri.file(args.path) : undefined;
        let saved = await panel.requestImage(format, target);
        if (saved === NOT_SHOWN) {
          // Seen under VS Code's server: a webview shown again whose page never loads. A new panel
          // starts from the store with everything the old one showed.
          log(`the ${kind} panel did not come back; opening it anew for the export`);
          panel.dispose();
          saved = await PANEL_SLOTS[kind].createOrShow(panels.host).requestImage(format, target);
        }
        if (typeof saved === 'string')
          throw new Error(`the ${kind} panel could not export ${format.toUpperCase()}: ${saved}`);
        log(`exported the ${kind} view as ${format} to ${saved.fsPath}`);
        return saved.fsPath;
      }
      const text = exportText(panels, kind, format);
      const target = args.path ? vscode.Uri.file(args.path) : await askSaveTarget(format, `${kind}.${format}`);
      if (!target) return undefined;
      await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(text));
      log(`exported the ${kind} view as ${format} to ${target.fsPath}`);
      return target.fsPath;
    }),

    'attentionDebugger.refreshRuns': () => ctx.refreshRuns(),
  };
}
