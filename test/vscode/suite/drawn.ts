/**
 * Asks a panel's page what it drew, through the harness's page hook (test/pageHook/pageHook.js,
 * which activateExtension has every page load): a `reportDrawn` question posted to the webview, a
 * `drawn` answer read from it. Neither is a product message: the page's own loop never sees the
 * question, and the panel drops the answer as a message its page's protocol does not have.
 */
import type * as vscode from 'vscode';
import type { CellRef, DrawnReport } from '../../../src/protocol/drawnReport';
import { type PanelKind, WEBVIEW_PROTOCOL_VERSION } from '../../../src/protocol/webview';

/** The page hook's file in dist/webview (scripts/test-vscode.mjs puts it there). */
export const PAGE_HOOK = 'pageHook.js';

/** The page hook's answer: what a page drew, and its panel. */
export interface DrawnMsg extends DrawnReport {
  type: 'drawn';
  panel: PanelKind;
  /** Whether the page may compile WebAssembly under its CSP (the hook tries the smallest module). */
  compilesWasm: boolean;
}

/** What requestDrawn needs of a panel (BasePanel; this bundle has its own copy of the class). */
interface Drawable {
  readonly kind: PanelKind;
  readonly panel: vscode.WebviewPanel;
  readonly isDisposed: boolean;
  readonly isReady: boolean;
}

/**
 * What the page of `p` has drawn (its header, its maps, the colours of `cells`): how the
 * integration tests check a panel as a person sees it. A string says why there is no answer.
 */
export async function requestDrawn(p: Drawable, cells: CellRef[] = [], timeoutMs = 15_000): Promise<DrawnMsg | string> {
  // A disposed panel's webview throws on every property: ask `isDisposed` before touching it.
  if (p.isDisposed) return `the ${p.kind} panel is closed`;
  if (!p.panel.visible) p.panel.reveal(p.panel.viewColumn, true); // hidden pages draw nothing
  const t0 = Date.now();
  while (!p.isDisposed && !(p.panel.visible && p.isReady) && Date.now() - t0 < timeoutMs)
    await new Promise((r) => setTimeout(r, 100));
  if (p.isDisposed || !p.isReady) return `the ${p.kind} panel's page is not ready`;
  return new Promise((resolve) => {
    const finish = (d: DrawnMsg | string): void => {
      clearTimeout(timer);
      answered.dispose();
      resolve(d);
    };
    const timer = setTimeout(() => finish(`the ${p.kind} panel did not report within ${timeoutMs} ms`), timeoutMs);
    const answered = p.panel.webview.onDidReceiveMessage((m: unknown) => {
      const d = m as { type?: unknown; error?: unknown };
      if (d?.type !== 'drawn') return;
      finish(typeof d.error === 'string' ? `the ${p.kind} page: ${d.error}` : (d as DrawnMsg));
    });
    void p.panel.webview.postMessage({ type: 'reportDrawn', v: WEBVIEW_PROTOCOL_VERSION, cells });
  });
}
