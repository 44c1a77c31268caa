/**
 * The VS Code side of a webview panel. One class owns a panel's whole life: its HTML (CSP with a
 * fresh nonce from crypto.randomBytes, scripts and plotly only from the extension's own folders),
 * the message loop (every message from the webview validated; a malformed one is logged, never
 * thrown), the state snapshot sent after `ready`, on `requestState` and whenever the panel becomes
 * visible (hidden webviews drop messages), exports, and cleanup: everything it registers goes
 * into one list that dispose() empties, whether the user closed the panel or the extension did.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { InspectInputMsg } from '../../protocol/pages/attention';
import {
  type CommonFromPage,
  type CommonToPage,
  type CursorFromPageMsg,
  type ExportMsg,
  type HoverStepMsg,
  type MessageBody,
  type OpenHeadAtMsg,
  type OpenHeadMsg,
  type PageExportFormat,
  type PageProtocol,
  type PanelKind,
  type PanelState,
  type PersistedState,
  WEBVIEW_PROTOCOL_VERSION,
  checkFromPage,
  checkPersistedState,
} from '../../protocol/webview';
import type { EngineClient } from '../engineClient';
import { errorText } from '../errorText';
import type { Selection } from '../selection';
import { dataUrlBytes } from './dataUrl';
import { DisposableList } from './disposables';
import { panelHtml } from './html';
import { announceSaved, saveWhole } from './saveFile';
import type { PanelStore } from './store';

/**
 * What a page asks that changes the selection every panel shows (a head, the cursor, an input):
 * its panel hands these to the Viewer (the hub's `onDidRequest`). A page's other requests (a
 * block, a beam node, an ablation) are answered by its own panel, to its own page.
 */
export type PanelRequest = OpenHeadMsg | OpenHeadAtMsg | CursorFromPageMsg | HoverStepMsg | InspectInputMsg;

/** What a panel answers its page's own requests with (the Viewer gives it): the engine and the selection. */
export interface PanelAnswers {
  readonly engine: EngineClient;
  selection(): Selection | undefined;
}

/** What panels need from the extension. */
export interface PanelHost {
  readonly extensionUri: vscode.Uri;
  readonly store: PanelStore;
  log(line: string): void;
  /** A request that changes the selection (a head clicked, the cursor moved, an input asked for). */
  request(from: PanelKind, m: PanelRequest): void;
  /** The engine and the selection, once the Viewer is made (undefined before: a page's request is then dropped). */
  answers(): PanelAnswers | undefined;
  /**
   * Scripts of dist/webview that a page loads before its own: none in the product; the test
   * harness adds its page hook (Panels.addPageScript, test/pageHook/pageHook.js).
   */
  readonly pageScripts?: readonly string[];
}

const COMMON_FROM_PAGE: ReadonlySet<string> = new Set<CommonFromPage['type']>([
  'ready',
  'requestState',
  'export',
  'error',
]);

/**
 * A page that has not said ready this long after it was shown is replaced (PanelSlot). Each
 * replacement in a row waits twice as long: a page that loads slowly on a busy machine (training
 * on every core) must not be replaced again and again before it can finish.
 */
export const READY_WITHIN_MS = 10_000;

/** Webview options: scripts on, and only dist/webview and plotly's folder loadable. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      vscode.Uri.joinPath(extensionUri, 'node_modules', 'plotly.js-dist-min'),
    ],
  };
}

/** What requestImage answers when the panel's page did not come back within 15 s. */
export const NOT_SHOWN = 'the panel did not show within 15 s';

/** The save dialog for an export: `name` in the first workspace folder, filtered to `format`. */
export function askSaveTarget(format: string, name: string): Thenable<vscode.Uri | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return vscode.window.showSaveDialog({
    filters: { [format.toUpperCase()]: [format] },
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
  });
}

/**
 * A panel and its page: `ToPage` is what it may post to its page, `FromPage` what its page may ask
 * of it beyond the common messages (both from its protocol, src/protocol/pages/<panel>.ts).
 */
export abstract class BasePanel<
  ToPage extends { type: string } = { type: string },
  FromPage extends { type: string } = { type: string },
> implements vscode.Disposable
{
  protected readonly disposables = new DisposableList();
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  /** Fires once, when the panel is gone (closed by the user or disposed by code). */
  readonly onDidDispose = this.disposeEmitter.event;
  private readonly stallEmitter = new vscode.EventEmitter<void>();
  /** Fires when the page has not said ready READY_WITHIN_MS after being shown (a blank panel). */
  readonly onDidStall = this.stallEmitter.event;
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  /** Fires each time the page says ready. */
  readonly onDidSayReady = this.readyEmitter.event;
  private stallTimer: NodeJS.Timeout | undefined;
  /** How long a shown page may take to say ready (PanelSlot lengthens it after a replacement). */
  private patienceMs = READY_WITHIN_MS;
  private disposed = false;
  private ready = false;
  /** An image asked for by the Export View command: where to save it, and who waits. */
  private pendingImage:
    | { format: PageExportFormat; target: vscode.Uri | undefined; done: (saved: vscode.Uri | string) => void }
    | undefined;

  protected constructor(
    readonly panel: vscode.WebviewPanel,
    protected readonly host: PanelHost,
    private readonly protocol: PageProtocol<PanelKind, ToPage, FromPage>,
  ) {
    panel.webview.options = webviewOptions(host.extensionUri);
    panel.webview.html = this.html();
    this.disposables.add(this.stallEmitter);
    this.disposables.add(this.readyEmitter);
    this.disposables.add({ dispose: () => clearTimeout(this.stallTimer) });
    this.disposables.add(panel.onDidDispose(() => this.dispose()));
    if (panel.visible) this.watchReady();
    this.disposables.add(
      panel.onDidChangeViewState((e) => {
        // Hidden, the page may be torn down (no retainContextWhenHidden) and reload when shown, or
        // may survive (seen under VS Code's server): either way it is sent nothing until it says
        // ready, which a reloaded page does by itself and a surviving one when pinged. Then it
        // gets the whole state.
        if (!e.webviewPanel.visible) {
          this.ready = false;
          clearTimeout(this.stallTimer);
        } else {
          this.ping();
          this.watchReady();
        }
      }),
    );
    this.disposables.add(panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m)));
  }

  /** Which panel this is (its protocol's). */
  get kind(): PanelKind {
    return this.protocol.panel;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Whether the page has said ready since it was last shown. */
  get isReady(): boolean {
    return this.ready;
  }

  /** Starts the clock: a shown page that never says ready is reported (onDidStall) to be replaced. */
  private watchReady(): void {
    clearTimeout(this.stallTimer);
    const patience = this.patienceMs;
    this.stallTimer = setTimeout(() => {
      if (this.disposed || this.ready || !this.panel.visible) return;
      this.host.log(`${this.kind} panel: its page did not say ready within ${patience / 1000} s; opening it anew`);
      this.stallEmitter.fire();
    }, patience);
  }

  /** Gives a page that has not said ready yet `ms` from now (a replacement of a stalled panel). */
  setPatience(ms: number): void {
    this.patienceMs = ms;
    if (!this.ready && this.panel.visible && !this.disposed) this.watchReady();
  }

  /** What this panel shows beyond the store (a head, a step), carried to a panel that replaces it. */
  persisted(): Omit<PersistedState, 'v' | 'panel'> {
    return {};
  }

  /** The panel's whole state, sent as one `state` message. */
  protected abstract snapshot(): PanelState;

  private html(): string {
    const w = this.panel.webview;
    const ext = this.host.extensionUri;
    return panelHtml({
      panel: this.kind,
      title: this.panel.title,
      cspSource: w.cspSource,
      nonce: randomBytes(16).toString('base64'),
      plotlyUri: w
        .asWebviewUri(vscode.Uri.joinPath(ext, 'node_modules', 'plotly.js-dist-min', 'plotly.min.js'))
        .toString(),
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(ext, 'dist', 'webview', `${this.kind}.js`)).toString(),
      beforeUris: (this.host.pageScripts ?? []).map((name) =>
        w.asWebviewUri(vscode.Uri.joinPath(ext, 'dist', 'webview', name)).toString(),
      ),
    });
  }

  /**
   * Posts a message if the webview is listening and visible; otherwise drops it, since the full
   * state goes out when the panel shows again. (The page validates what it receives; what the
   * extension sends was checked where it entered the extension.)
   */
  protected post(body: MessageBody<ToPage | CommonToPage>): void {
    if (this.disposed || !this.ready || !this.panel.visible) return;
    const message = { ...body, v: WEBVIEW_PROTOCOL_VERSION };
    this.panel.webview.postMessage(message).then(
      (delivered) => {
        if (!delivered)
          this.host.log(`${this.kind} panel: ${body.type} message not delivered (state follows when visible)`);
      },
      (err: unknown) => this.host.log(`${this.kind} panel: postMessage failed: ${(err as Error).message}`),
    );
  }

  /** Asks the page to say ready (it answers with `ready`, and then gets the state). Bypasses the ready gate of post(). */
  private ping(): void {
    if (this.disposed) return;
    this.panel.webview.postMessage({ type: 'ping', v: WEBVIEW_PROTOCOL_VERSION }).then(undefined, () => undefined);
  }

  /** Sends the full state (after ready, on request). */
  sendState(): void {
    this.post({ type: 'state', state: this.snapshot() } as unknown as MessageBody<ToPage>);
  }

  reveal(column?: vscode.ViewColumn): void {
    this.panel.reveal(column);
  }

  /**
   * What the page posted (the webview's onDidReceiveMessage; the tests post through it as a page
   * would): checked against this page's protocol; the common messages handled here, the page's own
   * requests by `answer`, whose failure is logged and shown.
   */
  receive(raw: unknown): void {
    const why = checkFromPage(this.protocol, raw);
    if (why) {
      this.host.log(`${this.kind} panel: malformed message from the webview ignored: ${why}`);
      return;
    }
    const type = (raw as { type: string }).type;
    try {
      if (COMMON_FROM_PAGE.has(type)) this.receiveCommon(raw as CommonFromPage);
      else
        void Promise.resolve(this.answer(raw as FromPage)).catch((err: unknown) => {
          this.host.log(`${type} from the ${this.kind} panel failed: ${errorText(err)}`);
          void vscode.window.showErrorMessage(`Attention Debugger: ${errorText(err)}`);
        });
    } catch (err) {
      this.host.log(`${this.kind} panel: handling ${type} failed: ${(err as Error).stack ?? String(err)}`);
    }
  }

  /** Answers what this panel's page asks of it (its protocol's page → panel messages). */
  protected abstract answer(m: FromPage): void | Promise<void>;

  private receiveCommon(m: CommonFromPage): void {
    switch (m.type) {
      case 'ready':
        if (m.panel !== this.kind) this.host.log(`${this.kind} panel: the webview says it is ${m.panel}`);
        this.ready = true;
        clearTimeout(this.stallTimer);
        this.sendState();
        this.readyEmitter.fire();
        break;
      case 'requestState':
        this.sendState();
        break;
      case 'export':
        void this.saveExport(m);
        break;
      case 'error':
        this.host.log(`${this.kind} panel (webview): ${m.message}`);
        if (this.pendingImage && m.message.startsWith(`export ${this.pendingImage.format}:`))
          this.finishImage(m.message);
        break;
    }
  }

  /**
   * Asks the webview for an image of what it shows (PNG or SVG, or the view as one HTML file) and
   * saves it to `target`, or where the save dialog says. Resolves with the saved file, or with the
   * reason it could not be made.
   */
  async requestImage(format: PageExportFormat, target?: vscode.Uri): Promise<vscode.Uri | string> {
    this.finishImage('superseded by a newer export');
    if (!this.panel.visible || !this.ready) {
      // A hidden webview drops messages and reloads when shown: show it, then wait until its new
      // page has said ready (and so has been sent the state it draws before answering).
      this.panel.reveal(this.panel.viewColumn, true);
      const t0 = Date.now();
      for (let i = 0; i < 150 && !this.disposed && !(this.panel.visible && this.ready); i++) {
        if (i % 5 === 0 && this.panel.visible) this.ping(); // a ping sent while the page reloaded is lost
        await new Promise((r) => setTimeout(r, 100));
      }
      this.host.log(`${this.kind} panel: shown again for the export in ${Date.now() - t0} ms`);
    }
    if (this.disposed || !this.panel.visible || !this.ready) return NOT_SHOWN;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.finishImage('the panel did not answer within 30 s'), 30_000);
      this.pendingImage = {
        format,
        target,
        done: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      this.post({ type: 'exportImage', format });
    });
  }

  private finishImage(result: vscode.Uri | string): void {
    const p = this.pendingImage;
    this.pendingImage = undefined;
    p?.done(result);
  }

  private async saveExport(m: ExportMsg): Promise<void> {
    const pending =
      this.pendingImage && this.pendingImage.format === m.format && (m.dataUrl ?? m.text) !== undefined
        ? this.pendingImage
        : undefined;
    const target = pending?.target ?? (await askSaveTarget(m.format, m.name));
    if (!target) {
      if (pending) this.finishImage('no file chosen');
      return;
    }
    try {
      const bytes = m.dataUrl !== undefined ? dataUrlBytes(m.dataUrl) : new TextEncoder().encode(m.text ?? '');
      await saveWhole(target, bytes);
      this.host.log(`${this.kind} panel: saved ${target.fsPath}`);
      if (pending) this.finishImage(target);
      else if (m.format === 'html') announceSaved(this.kind, target); // Export View says it itself
    } catch (err) {
      this.host.log(`${this.kind} panel: export to ${target.fsPath} failed: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(
        `Attention Debugger: could not save ${target.fsPath}: ${(err as Error).message}`,
      );
      if (pending) this.finishImage((err as Error).message);
    }
  }

  /** Validates state restored by a serializer; undefined (with a log line) when unusable. */
  static restoredState(host: PanelHost, kind: PanelKind, state: unknown): PersistedState | undefined {
    if (state === undefined || state === null) return undefined;
    const why = checkPersistedState(state, kind);
    if (why) {
      host.log(`${kind} panel: ignoring saved state from an earlier session: ${why}`);
      return undefined;
    }
    return state as PersistedState;
  }

  /** The one place that cleans up: idempotent; closes the panel if code disposed it. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposables.dispose();
    this.panel.dispose();
    this.disposeEmitter.fire();
    this.disposeEmitter.dispose();
  }
}
