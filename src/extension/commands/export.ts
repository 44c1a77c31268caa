/** What Export View writes from the extension's copy of a panel's data (JSON and CSV). */
import type { AttentionPayload, PanelKind } from '../protocol/webview';
import { HeadInspectorPanel, openPanelKinds, PANEL_SLOTS, type Panels } from './panels';
import { attentionToJson } from './convert';
import type { BasePanel } from './panels/base';

export function panelOf(kind: PanelKind): BasePanel | undefined {
  return PANEL_SLOTS[kind].current;
}

/** The panel in front (or, failing that, one that shows), for Export View without arguments. */
export function activePanelKind(): PanelKind | undefined {
  const open = openPanelKinds();
  return open.find((k) => panelOf(k)?.panel.active) ?? open.find((k) => panelOf(k)?.panel.visible);
}

/** What a panel shows, as JSON or CSV text, built from the panels' store (the extension's copy). */
export function exportText(panels: Panels, kind: PanelKind, format: 'json' | 'csv'): string {
  const s = panels.store;
  if (kind === 'dashboard') {
    if (format === 'json') return JSON.stringify({ schedule: s.schedule, rows: s.rows }, null, 1);
    const cols = ['step', 'loss', 'lr', 'tokensPerSec', 'gradNorm', 'valLoss', 'valBleu'] as const;
    return [cols.join(','), ...s.rows.map((r) => cols.map((c) => r[c] ?? '').join(','))].join('\n') + '\n';
  }
  if (kind === 'positional') {
    const p = s.positional;
    if (!p) throw new Error('the positional view shows nothing yet');
    const [n, d] = p.shape;
    const rows = Array.from({ length: n }, (_, i) => Array.from(p.values.subarray(i * d, (i + 1) * d)));
    if (format === 'json') return JSON.stringify({ shape: p.shape, values: rows });
    return (
      [
        ['position', ...Array.from({ length: d }, (_, j) => `dim${j}`)].join(','),
        ...rows.map((r, i) => [i, ...r].join(',')),
      ].join('\n') + '\n'
    );
  }
  const head = HeadInspectorPanel.slot.current?.currentHead ?? null;
  const a: AttentionPayload | null = s.attention;
  if (!a) throw new Error(`the ${kind} view shows no attention yet`);
  if (kind === 'head' && head) {
    const m = a.maps.find((x) => x.kind === head.kind);
    if (!m) throw new Error(`the attention has no ${head.kind} maps`);
    const [, heads, q, k] = m.shape;
    const off = (head.layer * heads + head.head) * q * k;
    const rows = Array.from({ length: q }, (_, i) => Array.from(m.weights.subarray(off + i * k, off + (i + 1) * k)));
    const queries = head.kind === 'encoder_self' ? a.srcTokens : a.tgtTokens;
    const keys = head.kind === 'decoder_self' ? a.tgtTokens : a.srcTokens;
    if (format === 'json') return JSON.stringify({ ...head, step: a.step, queries, keys, weights: rows }, null, 1);
    return (
      [
        ['query', ...keys].map(csvCell).join(','),
        ...rows.map((r, i) => [csvCell(queries[i] ?? ''), ...r].join(',')),
      ].join('\n') + '\n'
    );
  }
  if (format === 'json') return JSON.stringify(attentionToJson(a));
  const lines = ['kind,layer,head,query,key,weight'];
  for (const m of a.maps) {
    const [layers, heads, q, k] = m.shape;
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++)
        for (let i = 0; i < q; i++)
          for (let j = 0; j < k; j++)
            lines.push(`${m.kind},${l},${h},${i},${j},${m.weights[((l * heads + h) * q + i) * k + j]}`);
  }
  return lines.join('\n') + '\n';
}

function csvCell(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
