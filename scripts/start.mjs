// The main job on a fresh machine: set up, build, and open the demo workspace (demo/) in VS Code
// with the extension loaded, where it trains a tiny Transformer on the reverse task and shows the
// dashboard and the attention view (demo/.vscode/settings.json sets attentionDebugger.startupJob).
//
//   node scripts/start.mjs [--port 8765] [--no-setup] [--screenshot FILE [--wait S]]
//
// 1. bash scripts/setup-system.sh, bash scripts/setup-vscode.sh, node scripts/build.mjs (skipped
//    with --no-setup);
// 2. VS Code's server (code-server's server-main.js, as test/vscode/launcher runs it; shared code in
//    test/vscode/vscodeServer.js) on 127.0.0.1 in its own process group, with a profile kept in
//    .vscode-test/demo-profile/ (settings and window state survive restarts);
// 3. the extension is loaded by the workbench URL's payload (extensionDevelopmentPath), as the
//    tests do: the bare server has no --extensionDevelopmentPath flag, and a symlink to this folder
//    in its --extensions-dir does not work either (the server logs "Marked extension as removed"
//    for an extension missing from the dir's extensions.json, and never loads it);
// 4. prints the URL and opens it in Chromium when a display is available (else says to open it);
//    --screenshot FILE opens it headless instead, waits S seconds (default 60), saves a screenshot
//    and stops (a check that the demo comes up). Ctrl-C stops the server's whole process group.
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(repo);
const {
  prepareProfile,
  portIsFree,
  freePort,
  startServer,
  stopGroup,
  workbenchUrl,
  launchChromium,
  chromiumPath,
} = require('../test/vscode/vscodeServer.js');

const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0 && argv[i + 1] !== undefined) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  return eq ? eq.slice(name.length + 3) : fallback;
};
const say = (msg) => console.log(`[start] ${msg}`);
const fail = (msg) => {
  console.error(`[start] ${msg}`);
  process.exit(1);
};

const screenshot = opt('screenshot', undefined);
const waitS = Number(opt('wait', '60'));

// 1. Set up and build.
if (!argv.includes('--no-setup')) {
  for (const [cmd, args] of [
    ['bash', ['scripts/setup-system.sh']],
    ['bash', ['scripts/setup-vscode.sh']],
    [process.execPath, ['scripts/build.mjs']],
  ]) {
    say(`${cmd === process.execPath ? 'node' : cmd} ${args.join(' ')}`);
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) fail(`${args[0]} failed (exit ${r.status ?? r.signal})`);
  }
}
for (const f of ['dist/extension.js', 'dist/cli.js', 'dist/webview'])
  if (!existsSync(f)) fail(`${f} is missing: run node scripts/build.mjs`);

// 2. Profile and server.
const profileDir = join(repo, '.vscode-test', 'demo-profile');
mkdirSync(profileDir, { recursive: true });
const profile = prepareProfile(profileDir);
const wanted = Number(opt('port', '8765'));
const port = (await portIsFree(wanted)) ? wanted : await freePort();
if (port !== wanted) say(`port ${wanted} is taken; using ${port}`);
const logFile = join(repo, '.vscode-test', 'demo-server.log');
let server;
let browser;
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await browser?.close().catch(() => {});
  if (server) {
    stopGroup(server, 'SIGTERM');
    const gone = new Promise((r) => server.once('exit', r));
    await Promise.race([gone, sleep(3000)]);
    stopGroup(server, 'SIGKILL'); // anything of the group still left (extension hosts, the engine)
  }
  process.exit(code);
}
process.on('SIGINT', () => {
  say('Ctrl-C: stopping VS Code server');
  void stop(0);
});
process.on('SIGTERM', () => void stop(0));

say(`starting VS Code server on 127.0.0.1:${port} (log: ${logFile})`);
server = await startServer({ port, ...profile, logFile }).catch((err) => fail(err.message));
server.on('exit', (code, signal) => {
  if (!stopping) {
    say(`VS Code server exited (${signal ?? code}); see ${logFile}`);
    void stop(1);
  }
});
const url = workbenchUrl({ port, folder: join(repo, 'demo'), extensionDevelopmentPath: repo });
say(`VS Code with the demo workspace: ${url}`);

// 3. A browser.
if (screenshot) {
  browser = await launchChromium({ env: profile.env });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url);
  say(`headless check: waiting ${waitS} s, then saving ${screenshot}`);
  await sleep(waitS * 1000);
  await page.screenshot({ path: screenshot });
  say(`saved ${screenshot}`);
  await stop(0);
} else if ((process.env.DISPLAY || process.env.WAYLAND_DISPLAY) && existsSync(chromiumPath)) {
  browser = await launchChromium({ env: { ...process.env }, headless: false });
  const page = await browser.newPage({ viewport: null });
  await page.goto(url);
  say('opened in Chromium; Ctrl-C here stops the server');
} else {
  say(
    'no display here: open the URL above in a browser on this machine (or forward the port: ssh -L ' +
      port +
      ':127.0.0.1:' +
      port +
      ' …)',
  );
  say('Ctrl-C stops the server');
}
