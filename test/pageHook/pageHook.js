/* global window, requestAnimationFrame, setTimeout */
// The test harnesses' page hook: not part of the product. Run before a panel's own script (the
// VS Code tests: scripts/test-vscode.mjs copies it to dist/webview/pageHook.js and the harness's
// activateExtension has every page load it, Panels.addPageScript; the Chromium tests: an init
// script of test/webview/browser/harness.mjs's openPanel), it answers the harness's question
// `{type: 'reportDrawn', cells}` with `{type: 'drawn', panel, …}`: what the page drew, from the
// report the page left on `window.attentionDebuggerDrawn` (webview/common.ts's start,
// src/protocol/drawnReport.ts). The page's own message loop never sees the question, and the
// panel drops the answer as a message its page's protocol does not have.
(() => {
  const acquire = window.acquireVsCodeApi;
  if (typeof acquire !== 'function') return;
  // VS Code gives its API to one caller: the page's and the hook's calls share it.
  let api;
  window.acquireVsCodeApi = () => (api ??= acquire());
  window.addEventListener('message', (event) => {
    const m = event.data;
    if (typeof m !== 'object' || m === null || m.type !== 'reportDrawn') return;
    event.stopImmediatePropagation();
    // After the frame that draws what arrived before the question.
    requestAnimationFrame(() =>
      setTimeout(() => {
        const drawn = window.attentionDebuggerDrawn;
        const answer =
          typeof drawn === 'function'
            ? { type: 'drawn', v: m.v, ...drawn(Array.isArray(m.cells) ? m.cells : []) }
            : { type: 'drawn', v: m.v, error: 'the page has not started' };
        window.acquireVsCodeApi().postMessage(answer);
      }, 0),
    );
  });
})();
