/**
 * A small stand-in for the `vscode` module, enough for the panel classes: imported FIRST by a
 * test, it answers `require('vscode')` (external in the test bundle) so the classes run under
 * node:test without a VS Code. Records what the panels do: created panels, posted messages,
 * registered serializers, saved files.
 */
import Module from 'node:module';

type Listener<T> = (e: T) => void;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  disposed = false;
  readonly event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  get count(): number {
    return this.listeners.length;
  }
  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}

export class FakeUri {
  constructor(readonly path: string) {}
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `file://${this.path}`;
  }
  static file(p: string): FakeUri {
    return new FakeUri(p);
  }
  static joinPath(u: FakeUri, ...parts: string[]): FakeUri {
    return new FakeUri([u.path.replace(/\/$/, ''), ...parts].join('/'));
  }
  with(change: { path?: string }): FakeUri {
    return new FakeUri(change.path ?? this.path);
  }
}

export class FakeWebview {
  options: { enableScripts?: boolean; localResourceRoots?: FakeUri[] } = {};
  html = '';
  readonly cspSource = 'https://fake.vscode-cdn.net';
  readonly posted: unknown[] = [];
  readonly receive = new EventEmitter<unknown>();
  readonly onDidReceiveMessage = this.receive.event;
  asWebviewUri(u: FakeUri): { toString(): string } {
    return { toString: () => `https://fake.vscode-cdn.net${u.path}` };
  }
  postMessage(m: unknown): Promise<boolean> {
    this.posted.push(m);
    return Promise.resolve(true);
  }
}

export class FakePanel {
  readonly webview = new FakeWebview();
  visible = true;
  disposeCalls = 0;
  reveals = 0;
  private readonly disposeEmitter = new EventEmitter<void>();
  readonly viewState = new EventEmitter<{ webviewPanel: FakePanel }>();
  readonly onDidDispose = this.disposeEmitter.event;
  readonly onDidChangeViewState = this.viewState.event;
  constructor(
    readonly viewType: string,
    public title: string,
  ) {}
  reveal(): void {
    this.reveals++;
  }
  /** As VS Code: disposing fires onDidDispose once. */
  dispose(): void {
    this.disposeCalls++;
    if (this.disposeCalls === 1) this.disposeEmitter.fire();
  }
  setVisible(v: boolean): void {
    this.visible = v;
    this.viewState.fire({ webviewPanel: this });
  }
  /** What the webview would post. */
  fromWebview(m: unknown): void {
    this.webview.receive.fire(m);
  }
  listeners(): number {
    return this.webview.receive.count + this.viewState.count;
  }
}

export const created: FakePanel[] = [];
export const serializers = new Map<string, { deserializeWebviewPanel(p: unknown, s: unknown): Promise<void> }>();
export const written: { path: string; bytes: Uint8Array }[] = [];
/** The file system calls in order (`write PATH`, `rename FROM TO`): an export is written whole. */
export const steps: string[] = [];
/** The information messages shown, with their buttons. */
export const told: { text: string; items: string[] }[] = [];
export const saveDialog: { answer: FakeUri | undefined } = { answer: undefined };

export const fake = {
  EventEmitter,
  Uri: FakeUri,
  ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
  window: {
    /** One editor column, the active one (panels/column.ts opens panels beside it, in column Two). */
    tabGroups: { activeTabGroup: { viewColumn: 1 }, all: [{ viewColumn: 1 }] },
    createWebviewPanel(viewType: string, title: string): FakePanel {
      const p = new FakePanel(viewType, title);
      created.push(p);
      return p;
    },
    registerWebviewPanelSerializer(
      viewType: string,
      s: { deserializeWebviewPanel(p: unknown, s: unknown): Promise<void> },
    ) {
      serializers.set(viewType, s);
      return { dispose: () => serializers.delete(viewType) };
    },
    createOutputChannel: () => ({ appendLine: () => undefined, dispose: () => undefined }),
    showSaveDialog: async () => saveDialog.answer,
    showErrorMessage: async () => undefined,
    showInformationMessage: async (text: string, ...items: string[]) => {
      told.push({ text, items });
      return undefined;
    },
  },
  workspace: {
    workspaceFolders: [{ uri: FakeUri.file('/ws') }],
    fs: {
      writeFile: async (u: FakeUri, bytes: Uint8Array) => {
        written.push({ path: u.path, bytes });
        steps.push(`write ${u.path}`);
      },
      // A rename moves what was written: `written` holds each file where it ends up.
      rename: async (from: FakeUri, to: FakeUri) => {
        for (const w of written) if (w.path === from.path) w.path = to.path;
        steps.push(`rename ${from.path} ${to.path}`);
      },
      delete: async () => undefined,
    },
  },
};

const M = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = M._load;
M._load = function (this: unknown, request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fake : load.call(this, request, ...rest);
};
