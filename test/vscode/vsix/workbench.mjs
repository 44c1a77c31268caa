// Drives VS Code's workbench as a person does, for the installed-VSIX test: VS Code's server with
// a given extensions folder and no extension under development, the workbench in headless
// Chromium, the Command Palette (F1, type, pick), quick picks and input boxes, notifications, and
// the panels' pages (webview frames) read from their DOM. Shares the server and browser setup of
// test/vscode/launcher (../vscodeServer.js).
/* global document */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);
export const server = require('../vscodeServer.js');

/** `server-main.js --install-extension FILE --extensions-dir DIR`, as `code --install-extension` does. */
export function installExtension(vsix, profile) {
  const main = join(server.serverDir, 'out', 'server-main.js');
  const r = spawnSync(
    process.execPath,
    [main, '--install-extension', vsix, '--extensions-dir', profile.extensionsDir],
    { env: profile.env, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Starts the server and opens `folder` in the workbench; stop() ends both. */
export async function openWorkbench({ profile, folder, logFile }) {
  const port = await server.freePort();
  const proc = await server.startServer({ port, ...profile, logFile });
  const browser = await server.launchChromium({ env: profile.env });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const stop = async () => {
    await browser.close().catch(() => {});
    server.stopGroup(proc);
  };
  try {
    await page.goto(server.workbenchUrl({ port, folder }));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    // The status bar shows the folder once the window has restored; before that F1 can be lost.
    await page.locator('.statusbar').waitFor({ timeout: 60_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { page, serverPid: proc.pid, stop };
}

const quickInput = (page) => page.locator('.quick-input-widget .quick-input-box input');

/** Clicks the row of the open quick pick whose label is `label`. */
export async function choose(page, label, timeout = 30_000) {
  const row = page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: label }) })
    .first();
  await row.waitFor({ timeout });
  await row.click();
}

/**
 * F1, the command's title, and a click on its row (as a person picks it out of similar titles).
 * Right after the window opens the palette may not list the extension's commands yet (it does not
 * refresh while open): like a person, close it and ask again.
 */
export async function runCommand(page, title, timeout = 90_000) {
  const end = Date.now() + timeout;
  for (;;) {
    await page.keyboard.press('F1');
    await quickInput(page).waitFor({ state: 'visible', timeout: 30_000 });
    await quickInput(page).fill(`>${title}`);
    try {
      return await choose(page, title, 5_000);
    } catch (err) {
      if (Date.now() > end) throw err;
      await page.keyboard.press('Escape');
    }
  }
}

/** Waits for a quick pick or input box whose title contains `text`. */
export async function waitForQuestion(page, text, timeout = 60_000) {
  await page.locator('.quick-input-widget .quick-input-title', { hasText: text }).waitFor({ timeout });
}

/** The value an open input box offers, then Enter. */
export async function acceptInput(page) {
  const value = await quickInput(page).inputValue();
  await page.keyboard.press('Enter');
  return value;
}

/** The text of the first notification containing `text`, once shown. */
export async function notification(page, text, timeout = 120_000) {
  const toast = page.locator('.notifications-toasts .notification-list-item-message', { hasText: text }).first();
  await toast.waitFor({ timeout });
  return (await toast.textContent()) ?? '';
}

/**
 * What the attention view's page shows (its webview frame, found by its #grids), or null while no
 * such page is open: the header's run and step, the kinds and the drawn thumbnails.
 */
export async function attentionView(page) {
  for (const frame of page.frames()) {
    const seen = await frame
      .evaluate(() => {
        const grids = document.querySelector('#grids');
        const header = document.getElementById('view-header');
        if (!grids || !header) return null;
        return {
          run: header.dataset.run ?? '',
          step: header.dataset.step ? Number(header.dataset.step) : null,
          kinds: [...grids.querySelectorAll('section.kind')].map((s) => s.dataset.kind),
          thumbs: grids.querySelectorAll('canvas.thumb').length,
          drawn: grids.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
        };
      })
      .catch(() => null); // a frame navigating or detached
    if (seen) return seen;
  }
  return null;
}

/** The walkthrough page's steps: id, title, and whether VS Code marks them done. */
export async function walkthroughSteps(page) {
  return page.locator('.getting-started-step').evaluateAll((els) =>
    els.map((e) => ({
      id: e.getAttribute('data-step-id') ?? '',
      title: e.querySelector('.step-title')?.textContent ?? '',
      done: e.querySelector('[data-done-step-id].complete') !== null, // the step's check mark
    })),
  );
}

/** The "Attention Debugger" output channel as the extension host wrote it under the server's logs. */
export function outputChannel(userData) {
  const found = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^\d+-Attention Debugger\.log$/.test(e.name)) found.push(p);
    }
  };
  if (existsSync(join(userData, 'logs'))) walk(join(userData, 'logs'));
  return found.map((f) => readFileSync(f, 'utf8')).join('\n');
}

/** Polls `probe` until it returns something truthy; throws `what` after `timeoutMs`. */
export async function until(probe, what, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(500);
  }
}
