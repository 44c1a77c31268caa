/**
 * The extension ↔ webview protocol: messages posted between a panel class (src/extension/panels/)
 * and its browser code (webview/). Each message is a plain object with a `type` and the protocol
 * version `v`; both directions are validated on receipt with the field-naming checks of ./check,
 * so a malformed message becomes an error string (`attention.maps[0].weights must be a
 * Float32Array, got array`), never a crash.
 *
 * Attention weights and positional encodings travel as Float32Array + shape, never as JSON arrays
 * of numbers (DESIGN.md): VS Code's webview.postMessage and the browser's structured clone keep
 * typed arrays intact. Webview state persisted with setState goes through JSON, so it holds only
 * small UI selections, never weights.
 *
 * Imports nothing heavy: both the extension host and the browser bundle import this file.
 */
import { type Check, arrayOf, describe, isFiniteNumber, isString, object, oneOf } from './check';

/** Bumped on any incompatible change; a message with another `v` is rejected, naming `v`. */
export const WEBVIEW_PROTOCOL_VERSION = 1;

export const PANEL_KINDS = ['dashboard', 'attention', 'head', 'positional'] as const;
export type PanelKind = (typeof PANEL_KINDS)[number];

export const ATTENTION_KINDS = ['encoder_self', 'decoder_self', 'cross'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

export const EXPORT_FORMATS = ['png', 'svg', 'csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

// ---- payloads ----------------------------------------------------------------------------

/** One logged training step (a line of metrics.jsonl). */
export interface MetricRow {
  step: number;
  loss: number;
  lr: number;
  tokensPerSec: number;
  gradNorm: number;
  valLoss?: number;
  valBleu?: number;
}

/** One point of the planned learning-rate curve (eq. 3 sampled over the whole run). */
export interface SchedulePoint {
  step: number;
  lr: number;
}

/**
 * All layers × heads of one attention kind. `weights` is row-major [layers, heads, queries, keys]:
 * the weight of query q on key k in head h of layer l is
 * weights[((l·heads + h)·queries + q)·keys + k].
 * encoder_self: queries = keys = source tokens; decoder_self: target × target; cross: target × source.
 */
export interface AttentionMaps {
  kind: AttentionKind;
  shape: [layers: number, heads: number, queries: number, keys: number];
  weights: Float32Array;
}

/** Attention of one sentence pair. */
export interface AttentionPayload {
  /** The training step the weights were taken at. */
  step: number;
  srcTokens: string[];
  tgtTokens: string[];
  maps: AttentionMaps[];
}

/** Names one head. Layers and heads count from 0 on the wire (the UI shows them from 1). */
export interface HeadRef {
  kind: AttentionKind;
  layer: number;
  head: number;
}

/** A positional-encoding matrix, row-major [positions, dModel]. */
export interface PositionalPayload {
  shape: [positions: number, dModel: number];
  values: Float32Array;
}

// ---- extension → webview -------------------------------------------------------------------

interface Versioned {
  v: number;
}

/** Append training steps to the dashboard. `reset` first clears what it shows (a new run). */
export interface MetricsMsg extends Versioned {
  type: 'metrics';
  rows: MetricRow[];
  reset?: boolean;
}

/** The planned learning-rate curve of the whole run, drawn ahead of the actual points. */
export interface ScheduleMsg extends Versioned {
  type: 'schedule';
  totalSteps: number;
  warmupSteps: number;
  dModel: number;
  points: SchedulePoint[];
}

/** Attention of one sentence pair, every layer × head of every kind present. */
export interface AttentionMsg extends Versioned, AttentionPayload {
  type: 'attention';
}

/** Attention of the fixed probe sentence at earlier training steps, oldest first. */
export interface SnapshotsMsg extends Versioned {
  type: 'snapshots';
  items: AttentionPayload[];
}

export interface PositionalMsg extends Versioned, PositionalPayload {
  type: 'positional';
}

export interface DashboardState {
  panel: 'dashboard';
  rows: MetricRow[];
  schedule: Omit<ScheduleMsg, 'type' | 'v'> | null;
}
export interface AttentionState {
  panel: 'attention';
  attention: AttentionPayload | null;
  selected: HeadRef | null;
}
export interface HeadState {
  panel: 'head';
  head: HeadRef | null;
  attention: AttentionPayload | null;
  snapshots: AttentionPayload[];
}
export interface PositionalState {
  panel: 'positional';
  positional: PositionalPayload | null;
}
export type PanelState = DashboardState | AttentionState | HeadState | PositionalState;

/** A full snapshot of a panel's state: sent after `ready`, on `requestState`, and whenever the
 * panel becomes visible again (hidden webviews drop messages). Replaces everything shown. */
export interface StateMsg extends Versioned {
  type: 'state';
  state: PanelState;
}

/** Asks the panel for an image of what it shows; it answers with an `export` message (dataUrl). */
export interface ExportImageMsg extends Versioned {
  type: 'exportImage';
  format: 'png' | 'svg';
}

/** Asks the page to say `ready` again: after being hidden, a page may have been torn down and reloaded, or may have survived. */
export interface PingMsg extends Versioned {
  type: 'ping';
}

export type ToWebview =
  | MetricsMsg
  | ScheduleMsg
  | AttentionMsg
  | SnapshotsMsg
  | PositionalMsg
  | StateMsg
  | ExportImageMsg
  | PingMsg;

// ---- webview → extension -------------------------------------------------------------------

/** The page has loaded and listens; the extension answers with a `state`. */
export interface ReadyMsg extends Versioned {
  type: 'ready';
  panel: PanelKind;
}
export interface RequestStateMsg extends Versioned {
  type: 'requestState';
}
/** The user clicked a head thumbnail: open it in the head inspector. */
export interface OpenHeadMsg extends Versioned, HeadRef {
  type: 'openHead';
}
/** Save something the panel drew: png/svg as a data: URL, csv/json as text. */
export interface ExportMsg extends Versioned {
  type: 'export';
  format: ExportFormat;
  /** A suggested file name, without folder. */
  name: string;
  dataUrl?: string;
  text?: string;
}
/** The webview hit an error (e.g. a malformed message); the extension logs it. */
export interface ErrorMsg extends Versioned {
  type: 'error';
  message: string;
}

export type FromWebview = ReadyMsg | RequestStateMsg | OpenHeadMsg | ExportMsg | ErrorMsg;

// ---- validators ----------------------------------------------------------------------------

const isOptionalNumber: Check = (v, path) => (v === undefined ? undefined : isFiniteNumber(v, path));
const isOptionalString: Check = (v, path) => (v === undefined ? undefined : isString(v, path));
const isBoolean: Check = (v, path) =>
  typeof v === 'boolean' ? undefined : `${path} must be a boolean, got ${describe(v)}`;
const isOptionalBoolean: Check = (v, path) => (v === undefined ? undefined : isBoolean(v, path));
const isIndex: Check = (v, path) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0
    ? undefined
    : `${path} must be a non-negative integer, got ${JSON.stringify(v) ?? describe(v)}`;
const isCount: Check = (v, path) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1
    ? undefined
    : `${path} must be a positive integer, got ${JSON.stringify(v) ?? describe(v)}`;
const isFloat32Array: Check = (v, path) =>
  v instanceof Float32Array
    ? undefined
    : `${path} must be a Float32Array, got ${v === null || typeof v !== 'object' ? describe(v) : Array.isArray(v) ? 'array' : (v.constructor?.name ?? 'object')}`;

function nullable(check: Check): Check {
  return (v, path) => (v === null ? undefined : check(v, path));
}

function shapeOf(rank: number): Check {
  return (v, path) => {
    if (!Array.isArray(v) || v.length !== rank)
      return `${path} must be an array of ${rank} dimensions, got ${Array.isArray(v) ? `${v.length}` : describe(v)}`;
    for (let i = 0; i < rank; i++) {
      const why = isCount(v[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };
}

/** Every element must be a finite number (NaN in a Float32Array would poison colour scales). */
function finiteElements(a: Float32Array, path: string): string | undefined {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) return `${path}[${i}] must be finite, got ${a[i]}`;
  return undefined;
}

export const checkMetricRow: Check = object({
  step: isFiniteNumber,
  loss: isFiniteNumber,
  lr: isFiniteNumber,
  tokensPerSec: isFiniteNumber,
  gradNorm: isFiniteNumber,
  valLoss: isOptionalNumber,
  valBleu: isOptionalNumber,
});

export const checkSchedulePoint: Check = object({ step: isFiniteNumber, lr: isFiniteNumber });

export const checkHeadRef: Check = object({ kind: oneOf(ATTENTION_KINDS), layer: isIndex, head: isIndex });

const checkMapsShape = object({ kind: oneOf(ATTENTION_KINDS), shape: shapeOf(4), weights: isFloat32Array });

/** An attention payload, with its shapes checked against the token counts and buffer lengths. */
export const checkAttentionPayload: Check = (v, path) => {
  const why = object({
    step: isFiniteNumber,
    srcTokens: arrayOf(isString),
    tgtTokens: arrayOf(isString),
    maps: arrayOf(checkMapsShape),
  })(v, path);
  if (why) return why;
  const p = v as AttentionPayload;
  const seen = new Set<string>();
  for (let i = 0; i < p.maps.length; i++) {
    const m = p.maps[i];
    const at = `${path}.maps[${i}]`;
    if (seen.has(m.kind)) return `${at}.kind ${m.kind} appears twice`;
    seen.add(m.kind);
    const [layers, heads, q, k] = m.shape;
    const wantQ = m.kind === 'encoder_self' ? p.srcTokens.length : p.tgtTokens.length;
    const wantK = m.kind === 'decoder_self' ? p.tgtTokens.length : p.srcTokens.length;
    if (q !== wantQ)
      return `${at}.shape[2] must be ${wantQ} (${m.kind === 'encoder_self' ? 'srcTokens' : 'tgtTokens'}.length), got ${q}`;
    if (k !== wantK)
      return `${at}.shape[3] must be ${wantK} (${m.kind === 'decoder_self' ? 'tgtTokens' : 'srcTokens'}.length), got ${k}`;
    const n = layers * heads * q * k;
    if (m.weights.length !== n)
      return `${at}.weights must hold ${n} values (shape ${m.shape.join('×')}), got ${m.weights.length}`;
    const bad = finiteElements(m.weights, `${at}.weights`);
    if (bad) return bad;
  }
  return undefined;
};

export const checkPositionalPayload: Check = (v, path) => {
  const why = object({ shape: shapeOf(2), values: isFloat32Array })(v, path);
  if (why) return why;
  const p = v as PositionalPayload;
  const n = p.shape[0] * p.shape[1];
  if (p.values.length !== n)
    return `${path}.values must hold ${n} values (shape ${p.shape.join('×')}), got ${p.values.length}`;
  return finiteElements(p.values, `${path}.values`);
};

const checkScheduleBody = object({
  totalSteps: isCount,
  warmupSteps: isCount,
  dModel: isCount,
  points: arrayOf(checkSchedulePoint),
});

const checkPanelState: Check = (v, path) => {
  const why = object({ panel: oneOf(PANEL_KINDS) })(v, path);
  if (why) return why;
  switch ((v as PanelState).panel) {
    case 'dashboard':
      return object({ rows: arrayOf(checkMetricRow), schedule: nullable(checkScheduleBody) })(v, path);
    case 'attention':
      return object({ attention: nullable(checkAttentionPayload), selected: nullable(checkHeadRef) })(v, path);
    case 'head':
      return object({
        head: nullable(checkHeadRef),
        attention: nullable(checkAttentionPayload),
        snapshots: arrayOf(checkAttentionPayload),
      })(v, path);
    case 'positional':
      return object({ positional: nullable(checkPositionalPayload) })(v, path);
  }
};

const toWebviewChecks: Record<ToWebview['type'], Check> = {
  metrics: object({ rows: arrayOf(checkMetricRow), reset: isOptionalBoolean }),
  schedule: checkScheduleBody,
  attention: checkAttentionPayload,
  snapshots: object({ items: arrayOf(checkAttentionPayload) }),
  positional: checkPositionalPayload,
  state: object({ state: checkPanelState }),
  exportImage: object({ format: oneOf(['png', 'svg']) }),
  ping: object({}),
};

const fromWebviewChecks: Record<FromWebview['type'], Check> = {
  ready: object({ panel: oneOf(PANEL_KINDS) }),
  requestState: () => undefined,
  openHead: checkHeadRef,
  export: (v, path) => {
    const why = object({
      format: oneOf(EXPORT_FORMATS),
      name: isString,
      dataUrl: isOptionalString,
      text: isOptionalString,
    })(v, path);
    if (why) return why;
    const m = v as ExportMsg;
    const binary = m.format === 'png' || m.format === 'svg';
    if (binary && m.dataUrl === undefined)
      return `${path}.dataUrl must be a data: URL for format ${m.format}, got undefined`;
    if (binary && !m.dataUrl!.startsWith('data:'))
      return `${path}.dataUrl must start with data:, got ${JSON.stringify(m.dataUrl!.slice(0, 16))}`;
    if (!binary && m.text === undefined) return `${path}.text must be a string for format ${m.format}, got undefined`;
    if (!/^[^/\\]+$/.test(m.name))
      return `${path}.name must be a file name without folders, got ${JSON.stringify(m.name)}`;
    return undefined;
  },
  error: object({ message: isString }),
};

function checkEnvelope<T extends string>(checks: Record<T, Check>, v: unknown, root: string): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${root} must be an object, got ${describe(v)}`;
  const rec = v as Record<string, unknown>;
  if (typeof rec.type !== 'string' || !Object.prototype.hasOwnProperty.call(checks, rec.type)) {
    return `${root}.type must be one of ${Object.keys(checks).join(', ')}, got ${JSON.stringify(rec.type) ?? describe(rec.type)}`;
  }
  if (rec.v !== WEBVIEW_PROTOCOL_VERSION)
    return `${rec.type}.v must be protocol version ${WEBVIEW_PROTOCOL_VERSION}, got ${JSON.stringify(rec.v) ?? describe(rec.v)}`;
  return checks[rec.type as T](v, rec.type);
}

/** Validates a message the webview received; undefined when well formed, else why (naming the field). */
export function checkToWebview(v: unknown): string | undefined {
  return checkEnvelope(toWebviewChecks, v, 'message');
}

/** Validates a message the extension received from a webview. */
export function checkFromWebview(v: unknown): string | undefined {
  return checkEnvelope(fromWebviewChecks, v, 'message');
}

// ---- persisted UI state (vscode.setState → WebviewPanelSerializer) -------------------------

/** What a webview saves with setState: only small UI choices, restored by the serializer. */
export interface PersistedState {
  v: number;
  panel: PanelKind;
  /** The head selected in the attention grid or shown by the inspector. */
  head?: HeadRef;
  /** The snapshot step shown by the inspector's slider. */
  snapshotStep?: number;
}

/** Validates state handed back by deserializeWebviewPanel: it comes from disk and an older build. */
export function checkPersistedState(v: unknown, panel: PanelKind): string | undefined {
  const why = object({
    panel: oneOf([panel]),
    head: (x, p) => (x === undefined ? undefined : checkHeadRef(x, p)),
    snapshotStep: isOptionalNumber,
  })(v, 'state');
  if (why) return why;
  const rec = v as Record<string, unknown>;
  if (rec.v !== WEBVIEW_PROTOCOL_VERSION)
    return `state.v must be protocol version ${WEBVIEW_PROTOCOL_VERSION}, got ${JSON.stringify(rec.v) ?? describe(rec.v)}`;
  return undefined;
}

/** Builds a message with the current protocol version. */
export function msg<T extends ToWebview | FromWebview>(body: Omit<T, 'v'>): T {
  return { ...body, v: WEBVIEW_PROTOCOL_VERSION } as T;
}
