/**
 * The extension ↔ webview protocol: messages posted between a panel class (src/extension/panels/)
 * and its browser code (webview/). Each message is a plain object with a `type` and the protocol
 * version `v`. Each side validates what it receives, once, with the field-naming checks of ./check,
 * so a malformed message becomes an error string (`attention.maps[0].weights must be a
 * Float32Array, got array`), never a crash.
 *
 * Attention weights and positional encodings travel as Float32Array + shape (attention.ts), never
 * as JSON arrays of numbers: webview.postMessage and the browser's structured clone keep typed
 * arrays intact. State persisted with setState goes through JSON, so it holds only small UI
 * selections, never weights.
 *
 * Imports nothing heavy: both the extension host and the browser bundle import this file.
 */
import {
  type Attention,
  checkAttention,
  checkHeadRef,
  checkInputPair,
  type HeadRef,
  headRefFields,
  type InputPair,
} from './attention';
import {
  type Check,
  arrayOf,
  describe,
  isFloat32Array,
  isFiniteNumber,
  isIndex,
  isPositiveInt,
  isString,
  nullable,
  object,
  oneOf,
  optional,
  isBoolean,
  shapeOf,
} from './check';
import { type Ablation, type AblationEffect, checkAblation, checkAblationEffect } from './ablation';
import { type BeamTreeView, checkBeamTreeView } from './beamTree';
import { checkMetricRow, checkSchedulePoint, type MetricRow, type SchedulePoint } from './metrics';
import { checkRunEvent, checkTelemetryRow, type RunEvent, type TelemetryRow } from './telemetry';

/** Bumped on any incompatible change; a message with another `v` is rejected, naming `v`. */
export const WEBVIEW_PROTOCOL_VERSION = 2;

export const PANEL_KINDS = ['dashboard', 'attention', 'head', 'positional', 'heads', 'beam'] as const;
export type PanelKind = (typeof PANEL_KINDS)[number];

export const EXPORT_FORMATS = ['png', 'svg', 'csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

// ---- payloads ----------------------------------------------------------------------------

/** A positional-encoding matrix, row-major [positions, dModel]. */
export interface PositionalPayload {
  shape: [positions: number, dModel: number];
  values: Float32Array;
}

/**
 * What every panel says it shows, in its header: the selected run, the step its views point at,
 * and the input pair. Sent with every state, so a panel never shows one run under another's name.
 */
export interface ViewHeader {
  runDir: string;
  /** The run folder's name. */
  run: string;
  /** The step views point at (the shared step cursor); null: the newest. */
  step: number | null;
  /** `probe`, or the source sentence the user gave. */
  input: string;
  /** The run trains now. */
  live: boolean;
  /** Steps of the run's checkpoints, for choosing one. */
  checkpoints: number[];
  /** The run has a vocabulary: text can be typed (otherwise token ids). */
  vocab: boolean;
}

/** The whole planned learning-rate curve and what the dashboard says about it. */
export interface Schedule {
  totalSteps: number;
  warmupSteps: number;
  dModel: number;
  points: SchedulePoint[];
}

// ---- extension → webview -------------------------------------------------------------------

interface Versioned {
  v: number;
}

/** A message as its sender writes it: the version is stamped on by the one function that posts. */
export type MessageBody<T> = T extends unknown ? Omit<T, 'v'> : never;

/** Append training steps to the dashboard. `reset` first clears what it shows (a new run). */
export interface MetricsMsg extends Versioned {
  type: 'metrics';
  rows: MetricRow[];
  reset?: boolean;
}

/** The planned learning-rate curve of the whole run, drawn ahead of the actual points. */
export interface ScheduleMsg extends Versioned, Schedule {
  type: 'schedule';
}

/** Each head's roles (protocol/roles.ts) at some step; heads without a role are left out. */
export interface HeadRoles {
  head: string;
  roles: string[];
}
const checkHeadRoles = arrayOf(object({ head: isString, roles: arrayOf(isString) }));

/** Attention of one sentence pair, every layer × head of every kind present. */
export interface AttentionMsg extends Versioned, Attention {
  type: 'attention';
  /** The heads' roles at the attention's step; absent when the run has no telemetry. */
  roles?: HeadRoles[];
}

/** Attention of the fixed probe sentence at earlier training steps, oldest first. */
export interface SnapshotsMsg extends Versioned {
  type: 'snapshots';
  items: Attention[];
}

export interface PositionalMsg extends Versioned, PositionalPayload {
  type: 'positional';
}

/** Telemetry rows of the selected run (appended as training goes on). */
export interface TelemetryMsg extends Versioned {
  type: 'telemetry';
  rows: TelemetryRow[];
}

/** Health-check events of the selected run (appended as they fire). */
export interface EventsMsg extends Versioned {
  type: 'events';
  events: RunEvent[];
}

/** The step under the pointer in a panel with a step axis (the others highlight it); null: none. */
export interface HoverStepMsg extends Versioned {
  type: 'hoverStep';
  step: number | null;
}

/** The shared step cursor moved: the dashboard marks it, the inspector's slider goes there. */
export interface CursorMsg extends Versioned {
  type: 'cursor';
  step: number;
  /** The training loss logged at that step, when there is one. */
  loss?: number;
}

export interface DashboardState {
  panel: 'dashboard';
  header: ViewHeader | null;
  rows: MetricRow[];
  schedule: Schedule | null;
  cursor: number | null;
  /** Health-check findings: markers on the loss curve and the list of problems. */
  events: RunEvent[];
}
export interface AttentionState {
  panel: 'attention';
  header: ViewHeader | null;
  attention: Attention | null;
  selected: HeadRef | null;
  /** Each head's roles at the attention's step (the newest telemetry row at or before it). */
  roles: HeadRoles[];
  /** What the heads the user switched off do to this input (absent or null: none are off). */
  ablation?: AblationEffect | null;
}
export interface HeadsState {
  panel: 'heads';
  header: ViewHeader | null;
  telemetry: TelemetryRow[];
  events: RunEvent[];
  cursor: number | null;
}
export interface HeadState {
  panel: 'head';
  header: ViewHeader | null;
  head: HeadRef | null;
  /** What the attention view shows: the inspector shows this head of it. */
  attention: Attention | null;
  /** The probe pair's history, oldest first: the slider ranges over it when the input is the probe. */
  snapshots: Attention[];
  /** Loss of each snapshot step, when logged: shown beside the slider. */
  losses: { step: number; loss: number }[];
  cursor: number | null;
}
export interface PositionalState {
  panel: 'positional';
  header: ViewHeader | null;
  positional: PositionalPayload | null;
}
/** A sentence's beam search tree, and the attention of the node clicked (teacher-forced on its prefix). */
export interface BeamState {
  panel: 'beam';
  header: ViewHeader | null;
  tree: BeamTreeView | null;
  /** The clicked node and its prefix's attention: decoder input [BOS, …prefix without its last token]. */
  node: { id: number; attention: Attention } | null;
}
export type PanelState = DashboardState | AttentionState | HeadState | PositionalState | HeadsState | BeamState;

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

/** A cell of an attention map: query row `q`, key column `k` of one head. */
export interface CellRef extends HeadRef {
  q: number;
  k: number;
}

/** Asks the page what it drew: it answers with `drawn` (the integration tests check panels as drawn). */
export interface ReportDrawnMsg extends Versioned {
  type: 'reportDrawn';
  /** Cells whose drawn colour to read back. */
  cells: CellRef[];
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
  | TelemetryMsg
  | EventsMsg
  | HoverStepMsg
  | CursorMsg
  | StateMsg
  | ExportImageMsg
  | ReportDrawnMsg
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
/** The user moved the step cursor (the inspector's slider, a click on the loss curve). */
export interface CursorFromWebviewMsg extends Versioned {
  type: 'cursor';
  step: number;
}
/** The user clicked a cell of the Heads panel: this head at this step, in the inspector. */
export interface OpenHeadAtMsg extends Versioned, HeadRef {
  type: 'openHeadAt';
  step: number;
}
/** The user asked for the attention of a pair at a checkpoint (the attention view's form). */
export interface InspectInputMsg extends Versioned {
  type: 'inspectInput';
  input: InputPair;
  /** The checkpoint step; the newest when absent. */
  step?: number;
}
/** The user switched heads off (or all back on: no heads) in the attention view. */
export interface AblateHeadsMsg extends Versioned {
  type: 'ablateHeads';
  ablation: Ablation;
}
/** The user clicked a node of the beam tree: show its prefix's attention. */
export interface BeamNodeMsg extends Versioned {
  type: 'beamNode';
  node: number;
}
/** What a page drew, as a person sees it: its header, what is on screen, and colours of cells asked for. */
export interface DrawnMsg extends Versioned {
  type: 'drawn';
  panel: PanelKind;
  /** The header's run, step and input, as shown. */
  run: string;
  step: number | null;
  input: string;
  /** Attention maps drawn: their kinds and shapes (the attention view: every thumbnail). */
  maps: { kind: string; shape: number[] }[];
  /** The head shown (the inspector). */
  head: HeadRef | null;
  /** The inspector's slider: frames it ranges over. */
  frames: number;
  /** Drawn colour [r, g, b, a] of each cell asked for, null where that cell is not drawn. */
  colors: ([number, number, number, number] | null)[];
  /** Labels drawn over the data: event markers (`check@step`), role labels (`head role`), hover lines. */
  marks: string[];
}

/** The webview hit an error (e.g. a malformed message); the extension logs it. */
export interface ErrorMsg extends Versioned {
  type: 'error';
  message: string;
}

export type FromWebview =
  | ReadyMsg
  | RequestStateMsg
  | OpenHeadMsg
  | ExportMsg
  | CursorFromWebviewMsg
  | OpenHeadAtMsg
  | HoverStepMsg
  | InspectInputMsg
  | BeamNodeMsg
  | AblateHeadsMsg
  | DrawnMsg
  | ErrorMsg;

// ---- validators ----------------------------------------------------------------------------

export const checkPositionalPayload: Check = (v, path) => {
  const why = object({ shape: shapeOf(2), values: isFloat32Array })(v, path);
  if (why) return why;
  const p = v as PositionalPayload;
  const n = p.shape[0] * p.shape[1];
  if (p.values.length !== n)
    return `${path}.values must hold ${n} values (shape ${p.shape.join('×')}), got ${p.values.length}`;
  return undefined;
};

const checkSchedule = object({
  totalSteps: isPositiveInt,
  warmupSteps: isFiniteNumber,
  dModel: isPositiveInt,
  points: arrayOf(checkSchedulePoint),
});

const checkViewHeader = object({
  runDir: isString,
  run: isString,
  step: nullable(isIndex),
  input: isString,
  live: isBoolean,
  checkpoints: arrayOf(isIndex),
  vocab: isBoolean,
});

const checkPanelState: Check = (v, path) => {
  const why = object({ panel: oneOf(PANEL_KINDS), header: nullable(checkViewHeader) })(v, path);
  if (why) return why;
  switch ((v as PanelState).panel) {
    case 'dashboard':
      return object({
        rows: arrayOf(checkMetricRow),
        schedule: nullable(checkSchedule),
        cursor: nullable(isIndex),
        events: arrayOf(checkRunEvent),
      })(v, path);
    case 'attention':
      return object({
        attention: nullable(checkAttention),
        selected: nullable(checkHeadRef),
        roles: checkHeadRoles,
        ablation: optional(nullable(checkAblationEffect)),
      })(v, path);
    case 'heads':
      return object({
        telemetry: arrayOf(checkTelemetryRow),
        events: arrayOf(checkRunEvent),
        cursor: nullable(isIndex),
      })(v, path);
    case 'head':
      return object({
        head: nullable(checkHeadRef),
        attention: nullable(checkAttention),
        snapshots: arrayOf(checkAttention),
        losses: arrayOf(object({ step: isIndex, loss: isFiniteNumber })),
        cursor: nullable(isIndex),
      })(v, path);
    case 'positional':
      return object({ positional: nullable(checkPositionalPayload) })(v, path);
    case 'beam':
      return object({
        tree: nullable(checkBeamTreeView),
        node: nullable(object({ id: isIndex, attention: checkAttention })),
      })(v, path);
  }
};

const toWebviewChecks: Record<ToWebview['type'], Check> = {
  metrics: object({ rows: arrayOf(checkMetricRow), reset: optional(isBoolean) }),
  schedule: checkSchedule,
  attention: (v, path) => checkAttention(v, path) ?? object({ roles: optional(checkHeadRoles) })(v, path),
  snapshots: object({ items: arrayOf(checkAttention) }),
  positional: checkPositionalPayload,
  state: object({ state: checkPanelState }),
  cursor: object({ step: isIndex, loss: optional(isFiniteNumber) }),
  telemetry: object({ rows: arrayOf(checkTelemetryRow) }),
  events: object({ events: arrayOf(checkRunEvent) }),
  hoverStep: object({ step: nullable(isIndex) }),
  exportImage: object({ format: oneOf(['png', 'svg']) }),
  reportDrawn: object({ cells: arrayOf(object({ ...headRefFields, q: isIndex, k: isIndex })) }),
  ping: object({}),
};

const checkExport: Check = (v, path) => {
  const why = object({
    format: oneOf(EXPORT_FORMATS),
    name: isString,
    dataUrl: optional(isString),
    text: optional(isString),
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
};

const fromWebviewChecks: Record<FromWebview['type'], Check> = {
  ready: object({ panel: oneOf(PANEL_KINDS) }),
  requestState: () => undefined,
  openHead: checkHeadRef,
  export: checkExport,
  cursor: object({ step: isIndex }),
  openHeadAt: object({ ...headRefFields, step: isIndex }),
  hoverStep: object({ step: nullable(isIndex) }),
  inspectInput: object({ input: checkInputPair, step: optional(isIndex) }),
  beamNode: object({ node: isIndex }),
  ablateHeads: object({ ablation: checkAblation }),
  drawn: object({
    panel: oneOf(PANEL_KINDS),
    run: isString,
    step: nullable(isIndex),
    input: isString,
    maps: arrayOf(object({ kind: isString, shape: arrayOf(isIndex) })),
    head: nullable(checkHeadRef),
    frames: isIndex,
    colors: arrayOf(nullable(arrayOf(isIndex))),
    marks: arrayOf(isString),
  }),
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
  const why = object({ panel: oneOf([panel]), head: optional(checkHeadRef), snapshotStep: optional(isFiniteNumber) })(
    v,
    'state',
  );
  if (why) return why;
  const rec = v as Record<string, unknown>;
  if (rec.v !== WEBVIEW_PROTOCOL_VERSION)
    return `state.v must be protocol version ${WEBVIEW_PROTOCOL_VERSION}, got ${JSON.stringify(rec.v) ?? describe(rec.v)}`;
  return undefined;
}
