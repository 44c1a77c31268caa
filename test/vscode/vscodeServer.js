// VS Code's own server (code-server's bare server-main.js) and headless-or-not Debian Chromium:
// the parts that test/vscode/launcher (integration tests) and scripts/start.mjs (the demo) share.
// test/vscode/README.md says why it is done this way on machines that can download neither VS Code nor Electron.
/* global require, module, process, __dirname, fetch, setTimeout, URLSearchParams */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const repo = path.resolve(__dirname, '..', '..');
const serverDir =
  process.env.VSCODE_SERVER_DIR || path.join(repo, '.vscode-test/code-server/node_modules/code-server/lib/vscode');
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** Settings for a stable profile: no welcome page stealing focus, no telemetry, no update checks. */
const PROFILE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'workbench.enableExperiments': false,
  'git.openRepositoryInParentFolders': 'never',
  'extensions.ignoreRecommendations': true,
};

/**
 * Makes (or reuses) a profile under `root`: HOME and XDG dirs, user data with settings, an
 * extensions dir. Returns the environment for the server and the browser, and the folders.
 */
function prepareProfile(root, settings = PROFILE_SETTINGS) {
  const dir = (name) => {
    const p = path.join(root, name);
    fs.mkdirSync(p, { recursive: true });
    return p;
  };
  const env = {
    ...process.env,
    HOME: dir('home'),
    XDG_CONFIG_HOME: dir('home/.config'),
    XDG_CACHE_HOME: dir('home/.cache'),
    XDG_DATA_HOME: dir('home/.local/share'),
    XDG_RUNTIME_DIR: dir('run'),
  };
  fs.chmodSync(env.XDG_RUNTIME_DIR, 0o700);
  const userData = dir('user-data');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  const settingsFile = path.join(userData, 'User', 'settings.json');
  if (!fs.existsSync(settingsFile)) fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
  return { env, userData, extensionsDir: dir('extensions') };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** True when nothing listens on 127.0.0.1:port. */
function portIsFree(port) {
  return new Promise((resolve) => {
    const s = net
      .createServer()
      .once('error', () => resolve(false))
      .listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * Starts server-main.js in its own process group (setsid), so that stopGroup() ends it with its
 * extension hosts and watchers; resolves once it answers /version.
 */
async function startServer({ port, env, userData, extensionsDir, logFile }) {
  const serverMain = path.join(serverDir, 'out', 'server-main.js');
  if (!fs.existsSync(serverMain)) throw new Error(`${serverMain} not found: run bash scripts/setup-vscode.sh`);
  const logFd = fs.openSync(logFile, 'w');
  const server = spawn(
    process.execPath,
    [
      serverMain,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--disable-telemetry',
      '--disable-workspace-trust',
      '--enable-smoke-test-driver', // newer workbenches ignore the URL payload without it
      '--server-data-dir',
      userData,
      '--user-data-dir',
      userData,
      '--extensions-dir',
      extensionsDir,
    ],
    { env, detached: true, stdio: ['ignore', logFd, logFd] },
  );
  fs.closeSync(logFd);
  for (let i = 0; i < 300; i++) {
    if (server.exitCode !== null || server.signalCode !== null)
      throw new Error(`VS Code server exited at start: see ${logFile}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/version`);
      if (r.ok) return server;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  stopGroup(server);
  throw new Error(`VS Code server did not answer within 30 s: see ${logFile}`);
}

/** Kills a detached child's whole process group. */
function stopGroup(child, signal = 'SIGKILL') {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * The workbench URL: `folder` opened, and the extension under development (and tests) loaded from
 * this machine through the `payload` query (VS Code's server has no --extensionDevelopmentPath).
 */
function workbenchUrl({ port, folder, extensionDevelopmentPath, extensionTestsPath }) {
  const remote = (p) => `vscode-remote://127.0.0.1:${port}${path.resolve(p)}`;
  const payload = [];
  if (extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', remote(extensionDevelopmentPath)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  payload.push(['skipWelcome', 'true']);
  const query = new URLSearchParams({ payload: JSON.stringify(payload) });
  if (folder) query.set('folder', path.resolve(folder));
  return `http://127.0.0.1:${port}/?${query}`;
}

/** Debian Chromium through playwright-core (headless unless told otherwise). */
async function launchChromium({ env, headless = true }) {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, headless, env, args: CHROMIUM_ARGS });
}

module.exports = {
  repo,
  serverDir,
  chromiumPath,
  CHROMIUM_ARGS,
  PROFILE_SETTINGS,
  prepareProfile,
  freePort,
  portIsFree,
  startServer,
  stopGroup,
  workbenchUrl,
  launchChromium,
};
