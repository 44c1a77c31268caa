/* global window, requestAnimationFrame, setTimeout */
// The test harnesses' page hook: not part of the product. Run before a panel's own script (the
// VS Code tests: scripts/test-vscode.mjs copies it to dist/webview/pageHook.js and the harness's
// activateExtension has every page load it, Panels.addPageScript; the Chromium tests: an init
// script of test/webview/browser/harness.mjs's openPanel), it answers the harness's question
// `{type: 'reportDrawn', cells}` with `{type: 'drawn', panel, …}`: what the page drew, from the
// report the page left on `window.attentionDebuggerDrawn` (webview/common.ts's start,
// src/protocol/drawnReport.ts). The page's own message loop never sees the question, and the
// panel drops the answer as a message its page's protocol does not have. For screenshots it also
// answers `{type: 'showPart', selector, selects}` (the harness's showPart): each select of
// `selects` (selector → value) set as a person picks it, then the part scrolled into view, with
// `{type: 'partShown', found}`. The answer also says whether the page may compile WebAssembly
// (`compilesWasm`), which only a real webview's CSP can tell.
(() => {
  // Whether this page may compile WebAssembly (its CSP's 'wasm-unsafe-eval'; webview/lib/poolMax.wat):
  // the smallest module, its header alone.
  const compilesWasm = () => {
    try {
      return !!new window.WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    } catch {
      return false;
    }
  };
  const acquire = window.acquireVsCodeApi;
  if (typeof acquire !== 'function') return;
  // VS Code gives its API to one caller: the page's and the hook's calls share it.
  let api;
  window.acquireVsCodeApi = () => (api ??= acquire());
  window.addEventListener('message', (event) => {
    const m = event.data;
    if (typeof m === 'object' && m !== null && m.type === 'showPart') {
      event.stopImmediatePropagation();
      // Scrolled to first: a part drawn only on screen (lazyParts.ts) fills its selects then.
      const part = window.document.querySelector(m.selector);
      part?.scrollIntoView({ block: 'start' });
      setTimeout(() => {
        for (const [selector, value] of Object.entries(m.selects ?? {})) {
          const select = window.document.querySelector(selector);
          if (!select) continue;
          select.value = value;
          select.dispatchEvent(new window.Event('change', { bubbles: true }));
        }
        part?.scrollIntoView({ block: 'start' });
        window.acquireVsCodeApi().postMessage({ type: 'partShown', v: m.v, found: Boolean(part) });
      }, 300);
      return;
    }
    if (typeof m !== 'object' || m === null || m.type !== 'reportDrawn') return;
    event.stopImmediatePropagation();
    // After the frame that draws what arrived before the question.
    requestAnimationFrame(() =>
      setTimeout(() => {
        const drawn = window.attentionDebuggerDrawn;
        const answer =
          typeof drawn === 'function'
            ? { type: 'drawn', v: m.v, ...drawn(Array.isArray(m.cells) ? m.cells : []), compilesWasm: compilesWasm() }
            : { type: 'drawn', v: m.v, error: 'the page has not started' };
        window.acquireVsCodeApi().postMessage(answer);
      }, 0),
    );
  });
})();
