/**
 * Export View: what a panel shows, as an image, as data (protocol/export.ts, the one format; the
 * Beam Tree panel's tree as its BeamTreeView), or as one self-contained HTML file of the view (made
 * by the page: webview/viewHtml.ts).
 */
import * as vscode from 'vscode';
import {
  attentionCsv,
  attentionJson,
  headCsv,
  headJson,
  metricsCsv,
  metricsJson,
  positionalCsv,
  positionalJson,
} from '../../protocol/export';
import type { Attention } from '../../protocol/attention';
import { EXPORT_FORMATS, type ExportFormat, type PanelKind } from '../../protocol/webview';
import { type Cmd, type Ctx, guarded } from '../ctx';
import { askSaveTarget } from '../panels/base';
import { announceSaved, saveWhole } from '../panels/saveFile';
import { BeamTreePanel, HeadInspectorPanel, openPanelKinds, PANEL_SLOTS, type Panels } from '../panels';
import type { BasePanel } from '../panels/base';

function panelOf(kind: PanelKind): BasePanel | undefined {
  return PANEL_SLOTS[kind].current;
}

/** The panel in front (or, failing that, one that shows), for Export View without arguments. */
export function activePanelKind(): PanelKind | undefined {
  const open = openPanelKinds();
  return open.find((k) => panelOf(k)?.panel.active) ?? open.find((k) => panelOf(k)?.panel.visible);
}

/**
 * The panels whose data Export View writes as CSV or JSON from the store, and the Beam Tree panel,
 * whose tree it writes as JSON (the BeamTreeView the panel draws, what `report --beam` takes). The
 * others (Heads and the report panels) draw data the store does not hold as such: they export images
 * and HTML here, and their pages' own buttons save their tables.
 */
const DATA_EXPORTS: Readonly<Partial<Record<PanelKind, readonly ('csv' | 'json')[]>>> = {
  dashboard: ['csv', 'json'],
  positional: ['csv', 'json'],
  attention: ['csv', 'json'],
  head: ['csv', 'json'],
  beam: ['json'],
};

/** What a panel shows, as JSON or CSV text, built from the panels' store (the extension's copy). */
export function exportText(panels: Panels, kind: PanelKind, format: 'json' | 'csv'): string {
  if (!DATA_EXPORTS[kind]?.includes(format)) {
    const offered = EXPORT_FORMATS.filter((f) => offers(kind, f));
    throw new Error(
      `the ${kind} panel has no ${format.toUpperCase()} export here: choose ${offered.slice(0, -1).join(', ')} ` +
        `or ${offered.at(-1)}, or use the buttons on the panel itself`,
    );
  }
  if (kind === 'beam') {
    const tree = BeamTreePanel.slot.current?.shownTree;
    if (!tree) throw new Error('the beam panel shows no tree yet');
    return `${JSON.stringify(tree, null, 2)}\n`;
  }
  const s = panels.store;
  const context = s.header ? { run: s.header.runDir } : {};
  if (kind === 'dashboard') {
    return format === 'json' ? metricsJson(s.rows, s.schedule, context) : metricsCsv(s.rows, context);
  }
  if (kind === 'positional') {
    const p = s.positional;
    if (!p) throw new Error('the positional view shows nothing yet');
    return format === 'json' ? positionalJson(p.shape, p.values, context) : positionalCsv(p.shape, p.values, context);
  }
  const a = kind === 'head' ? inspectedFrame(panels) : s.attention;
  if (!a) throw new Error(`the ${kind} view shows no attention yet`);
  const head = kind === 'head' ? HeadInspectorPanel.slot.current?.currentHead : undefined;
  if (head) return format === 'json' ? headJson(a, head) : headCsv(a, head);
  return format === 'json' ? attentionJson(a) : attentionCsv(a);
}

/** What the inspector shows: the probe's snapshot at the cursor's step, or the attention view's input. */
function inspectedFrame(panels: Panels): Attention | null {
  const s = panels.store;
  if (s.attention?.source.input === 'input' || s.cursor === null) return s.attention;
  return s.snapshots.find((x) => x.source.step === s.cursor) ?? s.attention;
}

export interface ExportArgs {
  panel?: PanelKind;
  format?: ExportFormat;
  /** Where to write; asked with a save dialog when missing. */
  path?: string;
}

/**
 * Saves what a panel shows: PNG/SVG/HTML made by its webview (plotly's toImage, its canvas, the
 * view as one file), or the data as JSON/CSV in the one export format.
 */
export function exportView(ctx: Ctx): Cmd {
  return guarded(ctx, 'Export View', async (args: ExportArgs = {}) => {
    const kind = args.panel ?? activePanelKind();
    if (!kind) {
      void vscode.window.showInformationMessage(
        'Attention Debugger: open a panel (dashboard, attention, head inspector or positional) to export it.',
      );
      return undefined;
    }
    const format = args.format ?? (await pickFormat(kind));
    if (!format) return undefined;
    if (format === 'png' || format === 'svg' || format === 'html') {
      const target = args.path ? vscode.Uri.file(args.path) : undefined;
      const saved = await PANEL_SLOTS[kind].requestImage(ctx.panels.host, format, target);
      if (typeof saved === 'string')
        throw new Error(`the ${kind} panel could not export ${format.toUpperCase()}: ${saved}`);
      announce(ctx, kind, format, saved);
      return saved.fsPath;
    }
    const text = exportText(ctx.panels, kind, format);
    const target = args.path ? vscode.Uri.file(args.path) : await askSaveTarget(format, `${kind}.${format}`);
    if (!target) return undefined;
    await saveWhole(target, new TextEncoder().encode(text));
    announce(ctx, kind, format, target);
    return target.fsPath;
  });
}

/** Says where an export went, with a button that opens it. */
function announce(ctx: Ctx, kind: PanelKind, format: string, file: vscode.Uri): void {
  ctx.log(`exported the ${kind} view as ${format} to ${file.fsPath}`);
  announceSaved(kind, file);
}

/** Whether Export View writes `kind` as `format`: every panel as images and HTML, some as data. */
function offers(kind: PanelKind, format: ExportFormat): boolean {
  return (format !== 'csv' && format !== 'json') || (DATA_EXPORTS[kind]?.includes(format) ?? false);
}

async function pickFormat(kind: PanelKind): Promise<ExportFormat | undefined> {
  const offered = EXPORT_FORMATS.filter((f) => offers(kind, f));
  const items = offered.map((f) => ({
    label: f,
    description:
      f === 'html'
        ? 'the view as one self-contained HTML file'
        : f === 'png' || f === 'svg'
          ? 'an image of the panel'
          : kind === 'beam'
            ? 'the tree shown, as report --beam takes it'
            : 'the data shown',
  }));
  return (await vscode.window.showQuickPick(items, { title: `Export the ${kind} view as` }))?.label;
}
