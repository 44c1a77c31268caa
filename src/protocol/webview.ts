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
  isFiniteNumber,
  isIndex,
  isString,
  nullable,
  object,
  oneOf,
  optional,
  isBoolean,
} from './check';
import { type Ablation, checkAblation } from './ablation';
import { type BlockMsgBody, type RequestBlockBody, checkBlockMsg, checkBlockRange } from './attentionBlock';
import { checkMetricRow, type MetricRow } from './metrics';
import { checkRunEvent, checkTelemetryRow, type RunEvent, type TelemetryRow } from './telemetry';

import {
  checkHeadRoles,
  checkOverlayRun,
  checkPanelState,
  checkPositionalPayload,
  checkSchedule,
  type HeadRoles,
  type OverlayRun,
  PANEL_KINDS,
  type PanelKind,
  type PanelState,
  type PositionalPayload,
  type Schedule,
} from './panelState';

export {
  checkPositionalPayload,
  type HeadRoles,
  type OverlayRun,
  PANEL_KINDS,
  type PanelKind,
  type PanelState,
  type PositionalPayload,
  type Schedule,
  type ViewHeader,
} from './panelState';

/** Bumped on any incompatible change; a message with another `v` is rejected, naming `v`. */
export const WEBVIEW_PROTOCOL_VERSION = 2;
/** The id of the page's plotly.js script element, which the page watches load (panels/html.ts). */
export const PLOTLY_SCRIPT_ID = 'plotly-script';

export const EXPORT_FORMATS = ['png', 'svg', 'csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

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

/** Attention of one sentence pair, every layer × head of every kind present. */
export interface AttentionMsg extends Versioned, Attention {
  type: 'attention';
  /** The heads' roles at the attention's step; absent when the run has no telemetry. */
  roles?: HeadRoles[];
}

/** Attention of the probe sentence at more steps, for the page to merge into its history (mergeSnapshots). */
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

/** Other runs drawn on the dashboard with the selected one (a fork's begin at its first step); [] clears them. */
export interface OverlayMsg extends Versioned {
  type: 'overlay';
  runs: OverlayRun[];
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
  | OverlayMsg
  | HoverStepMsg
  | CursorMsg
  | StateMsg
  | ExportImageMsg
  | ReportDrawnMsg
  | PingMsg
  | (Versioned & BlockMsgBody);

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
  /** The header's note on who writes the run: `training`, an activity of a followed run, or ''. */
  activity: string;
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
  | ErrorMsg
  | (Versioned & RequestBlockBody);

// ---- validators ----------------------------------------------------------------------------

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
  overlay: object({ runs: arrayOf(checkOverlayRun) }),
  hoverStep: object({ step: nullable(isIndex) }),
  exportImage: object({ format: oneOf(['png', 'svg']) }),
  reportDrawn: object({ cells: arrayOf(object({ ...headRefFields, q: isIndex, k: isIndex })) }),
  ping: object({}),
  attentionBlock: checkBlockMsg,
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
    activity: isString,
    maps: arrayOf(object({ kind: isString, shape: arrayOf(isIndex) })),
    head: nullable(checkHeadRef),
    frames: isIndex,
    colors: arrayOf(nullable(arrayOf(isIndex))),
    marks: arrayOf(isString),
  }),
  error: object({ message: isString }),
  requestBlock: checkBlockRange,
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
