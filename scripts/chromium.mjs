// Headless Chromium for the webview tests (test/webview/browser/harness.mjs) and the benchmarks that
// draw in a panel's page (draw-latency, long-attention, the equal-time plot): test/vscode/vscodeServer.js's
// launcher (Debian's chromium through playwright-core, its flags), with a throwaway profile under `tmp`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';

const server = createRequire(import.meta.url)('../test/vscode/vscodeServer.js');

export const CHROMIUM = server.chromiumPath;

/** Launches the browser; fails with what to install when there is none. */
export async function launchChromium(tmp) {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const env = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'config'), XDG_CACHE_HOME: join(tmp, 'cache') };
  return server.launchChromium({ env });
}
