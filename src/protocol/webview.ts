/**
 * The extension ↔ webview protocol's common part: the envelope (a `type` and the protocol version
 * `v`), the messages every page speaks (ready, ping, state, export, error), the messages several
 * pages share (attention, cursor, hover, events, a head opened), and the checked envelope. What
 * each page and its panel say to each other is in ./pages/<panel>.ts: a page's `onMessage` is
 * typed with its own union only, so a page cannot handle another panel's message (a compile error).
 * Each side validates what it receives, once, with the field-naming checks of ./check and its
 * page's table, so a malformed message becomes an error string (`attention.maps[0].weights must be
 * a Float32Array, got array`), never a crash.
 *
 * Attention weights and positional encodings travel as Float32Array + shape (attention.ts), never
 * as JSON arrays of numbers: webview.postMessage and the browser's structured clone keep typed
 * arrays intact. State persisted with setState goes through JSON, so it holds only small UI
 * selections, never weights.
 *
 * Imports nothing heavy: both the extension host and the browser bundle import this file.
 */
import { type Attention, checkAttention, checkHeadRef, type HeadRef, headRefFields } from './attention';
import {
  type Check,
  arrayOf,
  describe,
  isAbsolutePath,
  isBoolean,
  isFiniteNumber,
  isIndex,
  isString,
  nullable,
  object,
  oneOf,
  optional,
} from './check';
import { checkRunEvent, type RunEvent } from './telemetry';
import { checkHeadRoles, type HeadRoles, PANEL_KINDS, type PanelKind, type PanelState } from './panelState';

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
export const WEBVIEW_PROTOCOL_VERSION = 3;
/** The id of the page's plotly.js script element, which the page watches load (panels/html.ts). */
export const PLOTLY_SCRIPT_ID = 'plotly-script';

export const EXPORT_FORMATS = ['png', 'svg', 'csv', 'json', 'html'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** What a page's own buttons may save: Export View's formats, and a table as Markdown (md). */
export const SAVE_FORMATS = [...EXPORT_FORMATS, 'md'] as const;
export type SaveFormat = (typeof SAVE_FORMATS)[number];
/** The formats the page itself makes (an image, or the view as one self-contained HTML file). */
export const PAGE_EXPORT_FORMATS = ['png', 'svg', 'html'] as const;
export type PageExportFormat = (typeof PAGE_EXPORT_FORMATS)[number];

export interface Versioned {
  v: number;
}

/** A message as its sender writes it: the version is stamped on by the one function that posts. */
export type MessageBody<T> = T extends unknown ? Omit<T, 'v'> : never;

// ---- extension → page, every page ----------------------------------------------------------

/** A full snapshot of a panel's state: sent after `ready`, on `requestState`, and whenever the
 * panel becomes visible again (hidden webviews drop messages). Replaces everything shown. */
export interface StateMsg<S extends PanelState = PanelState> extends Versioned {
  type: 'state';
  state: S;
}

/**
 * Asks the panel for an image of what it shows; it answers with an `export` message (a dataUrl for
 * png/svg; for html, the text of one self-contained file of the view: webview/viewHtml.ts).
 */
export interface ExportImageMsg extends Versioned {
  type: 'exportImage';
  format: PageExportFormat;
}

/** Asks the page to say `ready` again: after being hidden, a page may have been torn down and reloaded, or may have survived. */
export interface PingMsg extends Versioned {
  type: 'ping';
}

/** What every page is sent beyond its own messages; common.ts's `start` handles these. */
export type CommonToPage = ExportImageMsg | PingMsg;

// ---- extension → page, shared by some pages --------------------------------------------------

/** Attention of one sentence pair, every layer × head of every kind present (attention view, inspector). */
export interface AttentionMsg extends Versioned, Attention {
  type: 'attention';
  /** The heads' roles at the attention's step; absent when the run has no telemetry. */
  roles?: HeadRoles[];
}

/** The shared step cursor moved: the dashboard marks it, the inspector's slider goes there. */
export interface CursorMsg extends Versioned {
  type: 'cursor';
  step: number;
  /** The training loss logged at that step, when there is one. */
  loss?: number;
}

/** The step under the pointer in a panel with a step axis (the others highlight it); null: none. */
export interface HoverStepMsg extends Versioned {
  type: 'hoverStep';
  step: number | null;
}

/** Health-check events of the selected run (appended as they fire). */
export interface EventsMsg extends Versioned {
  type: 'events';
  events: RunEvent[];
}

// ---- page → extension, every page -----------------------------------------------------------

/** The page has loaded and listens; the extension answers with a `state`. */
export interface ReadyMsg extends Versioned {
  type: 'ready';
  panel: PanelKind;
}
export interface RequestStateMsg extends Versioned {
  type: 'requestState';
}
/** Save something the panel drew: png/svg as a data: URL, csv/json/html/md as text. */
export interface ExportMsg extends Versioned {
  type: 'export';
  format: SaveFormat;
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

/** What every page may post beyond its own requests; BasePanel handles these. */
export type CommonFromPage = ReadyMsg | RequestStateMsg | ExportMsg | ErrorMsg;

// ---- page → extension, shared by some pages --------------------------------------------------

/** The user clicked a head (a thumbnail, a ranked head): open it in the head inspector. */
export interface OpenHeadMsg extends Versioned, HeadRef {
  type: 'openHead';
}
/** The user moved the step cursor (the inspector's slider, a click on the loss curve). */
export interface CursorFromPageMsg extends Versioned {
  type: 'cursor';
  step: number;
}
/** The user clicked a head at a step (the Heads panel's cell, a finding's marker): that head at that step. */
export interface OpenHeadAtMsg extends Versioned, HeadRef {
  type: 'openHeadAt';
  step: number;
}

// ---- checks ----------------------------------------------------------------------------------

const checkExport: Check = (v, path) => {
  const why = object({
    format: oneOf(SAVE_FORMATS),
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

/** The checks of the shared messages, for the pages' tables (./pages/*.ts). */
export const sharedChecks = {
  attention: ((v, path) => checkAttention(v, path) ?? object({ roles: optional(checkHeadRoles) })(v, path)) as Check,
  cursor: object({ step: isIndex, loss: optional(isFiniteNumber) }),
  hoverStep: object({ step: nullable(isIndex) }),
  events: object({ events: arrayOf(checkRunEvent) }),
  openHead: checkHeadRef,
  cursorFromPage: object({ step: isIndex }),
  openHeadAt: object({ ...headRefFields, step: isIndex }),
};

/**
 * One page's protocol: its panel, and a check for each message type it is sent and may post
 * (the common ones added by `pageProtocol`). The types ride along for `start` and `BasePanel`.
 */
export interface PageProtocol<
  K extends PanelKind = PanelKind,
  ToPage extends { type: string } = { type: string },
  FromPage extends { type: string } = { type: string },
> {
  readonly panel: K;
  /** Never set: carries the message types, for `start`, `poster` and BasePanel to infer. */
  readonly messages?: { toPage: ToPage; fromPage: FromPage };
  readonly toPage: Record<(ToPage | CommonToPage)['type'], Check>;
  readonly fromPage: Record<(FromPage | CommonFromPage)['type'], Check>;
}

/** A page's protocol: its own messages' checks and the common ones (state checked as its panel's). */
export function pageProtocol<K extends PanelKind, ToPage extends { type: string }, FromPage extends { type: string }>(
  panel: K,
  checkState: Check,
  toPage: Record<Exclude<ToPage['type'], 'state'>, Check>,
  fromPage: Record<FromPage['type'], Check>,
): PageProtocol<K, ToPage, FromPage> {
  return {
    panel,
    toPage: {
      ...toPage,
      state: object({ state: checkState }),
      exportImage: object({ format: oneOf(PAGE_EXPORT_FORMATS) }),
      ping: object({}),
    } as Record<(ToPage | CommonToPage)['type'], Check>,
    fromPage: {
      ...fromPage,
      ready: object({ panel: oneOf(PANEL_KINDS) }),
      requestState: () => undefined,
      export: checkExport,
      error: object({ message: isString }),
    } as Record<(FromPage | CommonFromPage)['type'], Check>,
  };
}

function checkEnvelope(checks: Record<string, Check>, v: unknown, root: string): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${root} must be an object, got ${describe(v)}`;
  const rec = v as Record<string, unknown>;
  if (typeof rec.type !== 'string' || !Object.prototype.hasOwnProperty.call(checks, rec.type)) {
    return `${root}.type must be one of ${Object.keys(checks).join(', ')}, got ${JSON.stringify(rec.type) ?? describe(rec.type)}`;
  }
  if (rec.v !== WEBVIEW_PROTOCOL_VERSION)
    return `${rec.type}.v must be protocol version ${WEBVIEW_PROTOCOL_VERSION}, got ${JSON.stringify(rec.v) ?? describe(rec.v)}`;
  return checks[rec.type]!(v, rec.type);
}

/** Validates a message a page received; undefined when well formed for that page, else why (naming the field). */
export function checkToPage(page: PageProtocol, v: unknown): string | undefined {
  return checkEnvelope(page.toPage, v, 'message');
}

/** Validates a message a panel received from its page. */
export function checkFromPage(page: PageProtocol, v: unknown): string | undefined {
  return checkEnvelope(page.fromPage, v, 'message');
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
  /** The attention view draws value-weighted attention ‖α·vW^O‖ instead of the weights. */
  valueWeighted?: boolean;
  /** The run a report panel was given by its command (panels/runFolderPanel.ts), not the selected one. */
  runDir?: string;
}

/** Validates state handed back by deserializeWebviewPanel: it comes from disk and an older build. */
export function checkPersistedState(v: unknown, panel: PanelKind): string | undefined {
  const why = object({
    panel: oneOf([panel]),
    head: optional(checkHeadRef),
    snapshotStep: optional(isFiniteNumber),
    valueWeighted: optional(isBoolean),
    runDir: optional(isAbsolutePath),
  })(v, 'state');
  if (why) return why;
  const rec = v as Record<string, unknown>;
  if (rec.v !== WEBVIEW_PROTOCOL_VERSION)
    return `state.v must be protocol version ${WEBVIEW_PROTOCOL_VERSION}, got ${JSON.stringify(rec.v) ?? describe(rec.v)}`;
  return undefined;
}
