/**
 * The one format of every file a user exports: the panels' CSV/JSON buttons (webview/), the
 * Export View command (src/extension/) and the CLI's `attention --json` all write through these
 * pure functions. Each file says what it shows (run, checkpoint, step, input): JSON as fields,
 * CSV as `# key: value` lines before the header row (pandas: `read_csv(f, comment='#')`).
 * Weights nest as [layer][head][query][key] here and nowhere else.
 */
import {
  type Attention,
  type AttentionKind,
  ATTENTION_KINDS,
  findMaps,
  headId,
  headMap,
  type HeadRef,
  tokensOf,
} from './attention';
import { METRIC_COLUMNS, type MetricRow } from './metrics';

/** What an export shows, written at its top. */
export interface ExportContext extends Record<string, string | number | undefined> {
  run?: string;
  checkpoint?: string;
  step?: number;
  /** `probe`, or the source sentence the user gave. */
  input?: string;
}

/** The context of an attention: its source, and its input as the user would name it. */
export function attentionContext(a: Attention): ExportContext {
  const { runDir, checkpoint, step, input } = a.source;
  return {
    run: runDir,
    ...(checkpoint !== undefined ? { checkpoint } : {}),
    step,
    input: input === 'probe' ? 'probe' : a.srcTokens.join(' '),
  };
}

// ---- CSV (RFC 4180 quoting) -----------------------------------------------------------------

export function csvField(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(fields: readonly (string | number | undefined)[]): string {
  return fields.map(csvField).join(',');
}

/** `# key: value` lines (newlines in values folded), then the rows. */
function csvFile(context: Record<string, string | number | undefined>, rows: string[]): string {
  const notes = Object.entries(context)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `# ${k}: ${String(v).replace(/[\r\n]+/g, ' ')}`);
  return [...notes, ...rows].join('\n') + '\n';
}

// ---- metrics ----------------------------------------------------------------------------------

/** Every metrics row (not the downsampled display), one line each, header first. */
export function metricsCsv(rows: readonly MetricRow[], context: ExportContext = {}): string {
  return csvFile(context, [csvLine(METRIC_COLUMNS), ...rows.map((r) => csvLine(METRIC_COLUMNS.map((c) => r[c])))]);
}

export function metricsJson(rows: readonly MetricRow[], schedule: unknown, context: ExportContext = {}): string {
  return JSON.stringify({ ...context, schedule, rows }, null, 1);
}

// ---- attention --------------------------------------------------------------------------------

/** Layer, head, query, key as nested arrays of one kind: its weights, or its value-weighted norms. */
function nested(
  a: Attention,
  kind: AttentionKind,
  of: 'weights' | 'valueWeighted' = 'weights',
): number[][][][] | undefined {
  const m = findMaps(a, kind);
  const values = m?.[of];
  if (!m || !values) return undefined;
  const [layers, heads, q, k] = m.shape;
  const row = (l: number, h: number, i: number) =>
    Array.from(values.subarray(((l * heads + h) * q + i) * k, ((l * heads + h) * q + i + 1) * k));
  return Array.from({ length: layers }, (_, l) =>
    Array.from({ length: heads }, (_, h) => Array.from({ length: q }, (_, i) => row(l, h, i))),
  );
}

/**
 * Every kind present as `[layer][head][query][key]`, with the token labels and the context; and,
 * where the maps hold them, `value_weighted`: each kind's ‖α_ij · v_j W^O_h‖ nested the same way.
 */
export function attentionObject(a: Attention): Record<string, unknown> {
  const kinds = Object.fromEntries(ATTENTION_KINDS.flatMap((k) => (findMaps(a, k) ? [[k, nested(a, k)]] : [])));
  const weighted = Object.fromEntries(
    ATTENTION_KINDS.flatMap((k) => (findMaps(a, k)?.valueWeighted ? [[k, nested(a, k, 'valueWeighted')]] : [])),
  );
  const more = Object.keys(weighted).length ? { value_weighted: weighted } : {};
  return { ...attentionContext(a), src_tokens: a.srcTokens, tgt_tokens: a.tgtTokens, ...kinds, ...more };
}

export function attentionJson(a: Attention, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...attentionObject(a), ...extra });
}

/** What the attention view shows across a kind's heads (webview/lib/aggregate.ts), as `[query][key]` arrays. */
export interface KindAggregates {
  /** Per layer, the mean of its heads. */
  meanOfHeads: Float32Array[];
  /** The mean of every layer and head. */
  meanOfLayers: Float32Array;
  /** Encoder self-attention only: rollout and flow (flow null past its token limit). */
  rollout?: Float32Array;
  flow?: Float32Array | null;
}

export function aggregatesJson(a: Attention, kind: AttentionKind, g: KindAggregates): string {
  const { queryTokens, keyTokens } = tokensOf(a, kind);
  const k = keyTokens.length;
  const rows = (m: Float32Array) =>
    Array.from({ length: m.length / k }, (_, i) => Array.from(m.subarray(i * k, (i + 1) * k)));
  return JSON.stringify({
    ...attentionContext(a),
    kind,
    query_tokens: queryTokens,
    key_tokens: keyTokens,
    mean_of_heads: g.meanOfHeads.map(rows),
    mean_of_layers: rows(g.meanOfLayers),
    ...(g.rollout ? { rollout: rows(g.rollout) } : {}),
    ...(g.flow !== undefined ? { flow: g.flow ? rows(g.flow) : null } : {}),
  });
}

/** Every weight of every kind, one line each: kind, layer, head, query, key (from 0) and tokens. */
export function attentionCsv(a: Attention): string {
  const lines = [csvLine(['kind', 'layer', 'head', 'query', 'key', 'query_token', 'key_token', 'weight'])];
  for (const m of a.maps) {
    const [layers, heads, q, k] = m.shape;
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) {
        const map = headMap(a, { kind: m.kind, layer: l, head: h })!;
        for (let i = 0; i < q; i++)
          for (let j = 0; j < k; j++)
            lines.push(csvLine([m.kind, l, h, i, j, map.queryTokens[i], map.keyTokens[j], map.weights[i * k + j]]));
      }
  }
  return csvFile(attentionContext(a), lines);
}

/** A head in an export's fields: its name (`cross:0.1`) and its parts, all from 0. */
const headFields = (ref: HeadRef) => ({ head_id: headId(ref), kind: ref.kind, layer: ref.layer, head: ref.head });

/** A head's map: its weights, or (`valueWeighted`) its value-weighted norms ‖α·vW^O‖ in their place. */
function requireHead(a: Attention, ref: HeadRef, valueWeighted: boolean) {
  const m = headMap(a, ref);
  if (!m) throw new Error(`the attention has no head ${headId(ref)}`);
  if (!valueWeighted) return m;
  const maps = findMaps(a, ref.kind)!;
  if (!maps.valueWeighted) throw new Error(`the attention has no value-weighted maps of ${ref.kind}`);
  const offset = (ref.layer * maps.shape[1] + ref.head) * m.queries * m.keys;
  return { ...m, weights: maps.valueWeighted.subarray(offset, offset + m.queries * m.keys) };
}

/** What a value-weighted head export says it holds. */
const VALUE_WEIGHTED = { values: 'value_weighted ‖α·vW^O‖ (Kobayashi et al., 2020)' };

/** One head: a header of key tokens (`query\key`), then a line per query token; its weights, or its value-weighted norms. */
export function headCsv(a: Attention, ref: HeadRef, valueWeighted = false): string {
  const m = requireHead(a, ref, valueWeighted);
  const lines = [csvLine(['query\\key', ...m.keyTokens])];
  for (let q = 0; q < m.queries; q++)
    lines.push(csvLine([m.queryTokens[q], ...Array.from(m.weights.subarray(q * m.keys, (q + 1) * m.keys))]));
  return csvFile({ ...attentionContext(a), ...headFields(ref), ...(valueWeighted ? VALUE_WEIGHTED : {}) }, lines);
}

/** One head as JSON: weights [query][key] with the token labels (`value_weighted` in their place when asked). */
export function headJson(a: Attention, ref: HeadRef, valueWeighted = false): string {
  const m = requireHead(a, ref, valueWeighted);
  const rows = Array.from({ length: m.queries }, (_, q) =>
    Array.from(m.weights.subarray(q * m.keys, (q + 1) * m.keys)),
  );
  return JSON.stringify(
    {
      ...attentionContext(a),
      ...headFields(ref),
      query_tokens: m.queryTokens,
      key_tokens: m.keyTokens,
      ...(valueWeighted ? { value_weighted: rows } : { weights: rows }),
    },
    null,
    1,
  );
}

/** A file name for a head's export: `cross-1.2-step1500.csv` for cross:1.2 (no colon: Windows refuses it), `…-value-weighted.csv` for its norms. */
export function headFileName(a: Attention, ref: HeadRef, format: string, valueWeighted = false): string {
  return `${headId(ref).replace(':', '-')}-step${a.source.step}${valueWeighted ? '-value-weighted' : ''}.${format}`;
}

// ---- positional encoding ------------------------------------------------------------------

export function positionalCsv(shape: [number, number], values: Float32Array, context: ExportContext = {}): string {
  const [n, d] = shape;
  const lines = [csvLine(['position', ...Array.from({ length: d }, (_, j) => `dim${j}`)])];
  for (let r = 0; r < n; r++) lines.push(csvLine([r, ...Array.from(values.subarray(r * d, (r + 1) * d))]));
  return csvFile(context, lines);
}

export function positionalJson(shape: [number, number], values: Float32Array, context: ExportContext = {}): string {
  const [n, d] = shape;
  const rows = Array.from({ length: n }, (_, r) => Array.from(values.subarray(r * d, (r + 1) * d)));
  return JSON.stringify({ ...context, shape, values: rows });
}

// ---- Markdown tables (the report panels' Markdown buttons) -----------------------------------

/** A cell of a Markdown table: pipes escaped, line breaks folded, so no cell splits a row. */
export function markdownCell(v: string | number | undefined): string {
  return v === undefined
    ? ''
    : String(v)
        .replace(/\|/g, '\\|')
        .replace(/[\r\n]+/g, ' ');
}

/** A GitHub-flavoured Markdown table: a header row, its rule, then the rows. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number | undefined)[])[],
): string {
  const line = (cells: readonly (string | number | undefined)[]) => `| ${cells.map(markdownCell).join(' | ')} |`;
  return [line(header), `|${header.map(() => ' --- |').join('')}`, ...rows.map(line)].join('\n');
}
