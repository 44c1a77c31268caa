/* global window, document, requestAnimationFrame, atob, MutationObserver -- PAGE_* run in Chromium */
// What bench/long-attention.mjs needs to play the extension host honestly: where a reply's frame starts
// and ends on the engine's stdout, how long the host's thread is held (task by task, not across the
// engine's compute in another process), what VS Code does with a panel's postMessage, and how the page
// gets the message as VS Code hands it over (typed arrays transferred, no JSON of the weights).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';

/**
 * Watches a JSON-RPC stream (Content-Length framing) chunk by chunk: `frames` gets, for each
 * message, the time its first and last bytes arrived (t0, t1) and its size with headers. Attach
 * before the reader's own listener, so t1 is stamped before the frame is parsed.
 */
export function frameWatcher() {
  const frames = [];
  let head = Buffer.alloc(0);
  let left = 0;
  let cur;
  const onData = (d) => {
    const now = performance.now();
    let i = 0;
    while (i < d.length) {
      if (left > 0) {
        const n = Math.min(left, d.length - i);
        left -= n;
        i += n;
        if (left === 0) cur.t1 = now;
        continue;
      }
      if (head.length === 0) frames.push((cur = { t0: now, bytes: 0 }));
      const joined = Buffer.concat([head, d.subarray(i)]);
      const end = joined.indexOf('\r\n\r\n');
      if (end < 0) {
        head = joined;
        break;
      }
      left = Number(/Content-Length:\s*(\d+)/i.exec(joined.subarray(0, end).toString('latin1'))[1]);
      cur.bytes = end + 4 + left;
      i += end + 4 - head.length;
      head = Buffer.alloc(0);
      if (left === 0) cur.t1 = now;
    }
  };
  return { frames, onData };
}

/**
 * The lengths of the host's tasks, sampled: a 1 ms timer that records when it fires; a gap of g ms
 * between two firings means the thread was held about g − 1 ms. `longest(a, b)`: the longest hold
 * ending after a and starting before b (performance.now() times).
 */
export function taskSampler() {
  const at = [performance.now()];
  let timer;
  const tick = () => {
    at.push(performance.now());
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return {
    stop: () => clearTimeout(timer),
    longest(a = -Infinity, b = Infinity) {
      let m = 0;
      for (let i = 1; i < at.length; i++) if (at[i] > a && at[i - 1] < b) m = Math.max(m, at[i] - at[i - 1] - 1);
      return m;
    },
  };
}

/**
 * A panel's postMessage in the extension host, as VS Code 1.100 does it (extHostWebview's
 * serializeWebviewMessage, for extensions with engines.vscode ≥ 1.57): the message as JSON, with each
 * ArrayBuffer and typed array replaced by a reference to a buffer sent apart; then the buffers copied
 * into the IPC frame. Returns what the renderer gets: the text and the buffers.
 */
export function vscodePostMessage(message) {
  const buffers = [];
  const add = (b) => {
    let i = buffers.indexOf(b);
    if (i < 0) i = buffers.push(b) - 1;
    return i;
  };
  const text = JSON.stringify(message, (_key, v) => {
    if (v instanceof ArrayBuffer) return { $$vscode_array_buffer_reference$$: true, index: add(v) };
    if (ArrayBuffer.isView(v))
      return {
        $$vscode_array_buffer_reference$$: true,
        index: add(v.buffer),
        view: { type: v.constructor.name, byteLength: v.byteLength, byteOffset: v.byteOffset },
      };
    return v;
  });
  const frame = Buffer.concat([Buffer.from(text), ...buffers.map((b) => new Uint8Array(b))]);
  return { text, buffers, bytes: frame.length };
}

/** Page: a fake acquireVsCodeApi (records what the page posts). */
export const PAGE_INIT = () => {
  window.__posted = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => undefined,
    setState: () => undefined,
  });
};

/**
 * Page, untimed: the message as VS Code's webview gets it from the renderer, its buffers as
 * ArrayBuffers (here from base64: CDP carries no binary; the panel's CSP, like VS Code's, allows no
 * fetch) and its references revived into typed arrays over them.
 */
export const PAGE_STAGE = ({ text, b64 }) => {
  const buffers = b64.map((s) => {
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u.buffer;
  });
  window.__msg = JSON.parse(text, (_key, v) => {
    if (!v || v.$$vscode_array_buffer_reference$$ !== true) return v;
    const b = buffers[v.index];
    if (!v.view) return b;
    const T = window[v.view.type];
    return new T(b, v.view.byteOffset, v.view.byteLength / T.BYTES_PER_ELEMENT);
  });
  window.__transfer = buffers;
};

/**
 * Page, timed: posts the staged message to the page with its buffers transferred (as VS Code's
 * webview host posts into the panel's frame), and resolves when the grid says it is drawn
 * (body[data-render-done]) and when the next frame after that has been painted.
 */
export const PAGE_POST = () =>
  new Promise((resolve) => {
    const g0 = Number(document.body.dataset.renderDone ?? 0);
    const t0 = performance.now();
    const obs = new MutationObserver(() => {
      if (!(Number(document.body.dataset.renderDone ?? 0) > g0)) return;
      obs.disconnect();
      const drawn = performance.now() - t0;
      requestAnimationFrame(() =>
        setTimeout(() =>
          resolve({
            drawn,
            painted: performance.now() - t0,
            thumbs: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
          }),
        ),
      );
    });
    obs.observe(document.body, { attributes: true, attributeFilter: ['data-render-done'] });
    window.postMessage(window.__msg, '*', window.__transfer);
  });
