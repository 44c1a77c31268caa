// Headless Chromium for the webview tests (test/webview/browser/harness.mjs) and the benchmarks that
// draw in a panel's page (draw-latency, long-attention, the equal-time plot): Debian's chromium driven
// by playwright-core, with a throwaway profile under `tmp`.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches the browser; fails with what to install when there is none. */
export async function launchChromium(tmp) {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
    env: { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'config'), XDG_CACHE_HOME: join(tmp, 'cache') },
  });
}
