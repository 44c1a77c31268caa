/**
 * The manifest as the marketplace and a new user meet it: the fields vsce and the gallery read, an
 * icon that is a 128×128 PNG, engines.vscode equal to the VS Code the integration tests run, a
 * walkthrough whose every button runs a contributed command that also completes its step, and a
 * README that starts with Install. test/vscode/vsix/ checks the packed VSIX itself.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, cannotRun, readJson } from '../helpers';

interface Step {
  id: string;
  title: string;
  description: string;
  media: { image?: string; svg?: string; markdown?: string; altText?: string };
  completionEvents?: string[];
}
interface Manifest {
  name: string;
  publisher: string;
  version: string;
  license: string;
  repository: { type: string; url: string };
  icon: string;
  galleryBanner: { color: string; theme: string };
  categories: string[];
  keywords: string[];
  extensionKind: string[];
  engines: { vscode: string };
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
  contributes: {
    commands: { command: string; enablement?: string }[];
    walkthroughs: { id: string; steps: Step[] }[];
    configuration: { properties: Record<string, unknown> };
  };
  capabilities?: {
    untrustedWorkspaces?: { supported: boolean | 'limited'; description?: string; restrictedConfigurations?: string[] };
  };
}

const pkg = readJson<Manifest>(join(REPO, 'package.json'));

/** The marketplace's categories (vsce rejects others). */
const CATEGORIES = [
  'AI',
  'Azure',
  'Chat',
  'Data Science',
  'Debuggers',
  'Education',
  'Extension Packs',
  'Formatters',
  'Keymaps',
  'Language Packs',
  'Linters',
  'Machine Learning',
  'Notebooks',
  'Others',
  'Programming Languages',
  'SCM Providers',
  'Snippets',
  'Testing',
  'Themes',
  'Visualization',
];

test('the gallery fields are there: publisher, version, license with its file, repository, banner, categories, keywords, changelog', () => {
  assert.match(pkg.publisher, /^[a-z0-9][a-z0-9-]*$/);
  assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
  assert.equal(pkg.license, 'MIT');
  assert.match(readFileSync(join(REPO, 'LICENSE'), 'utf8'), /^MIT License/);
  assert.match(pkg.repository.url, /^https:\/\//);
  assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
  assert.ok(['dark', 'light'].includes(pkg.galleryBanner.theme));
  for (const c of pkg.categories) assert.ok(CATEGORIES.includes(c), `${c} is not a marketplace category`);
  assert.ok(pkg.keywords.length > 0 && pkg.keywords.length <= 30, 'the marketplace takes up to 30 keywords');
  assert.match(
    readFileSync(join(REPO, 'CHANGELOG.md'), 'utf8'),
    new RegExp(`^## ${pkg.version.replace(/\./g, '\\.')}$`, 'm'),
  );
  assert.deepEqual(pkg.extensionKind, ['workspace']);
  assert.equal(pkg.scripts.start, 'node scripts/start.mjs', 'npm start runs the main job');
  assert.equal(pkg.scripts.package, 'node scripts/package.mjs');
});

test('workspace trust: limited in Restricted Mode, where training waits for trust and the settings that act are ignored', () => {
  const trust = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(trust?.supported, 'limited');
  assert.match(trust?.description ?? '', /open, follow and inspect runs/);
  // The settings that choose where files are written, start a job, or pick native code to load.
  const acting = ['attentionDebugger.runFolder', 'attentionDebugger.startupJob', 'attentionDebugger.backend'];
  assert.deepEqual([...(trust?.restrictedConfigurations ?? [])].sort(), [...acting].sort());
  for (const key of acting) assert.ok(key in pkg.contributes.configuration.properties, `${key} is a setting`);
  const enablement = (id: string) => pkg.contributes.commands.find((c) => c.command === id)?.enablement;
  assert.equal(enablement('attentionDebugger.train'), 'isWorkspaceTrusted');
  assert.equal(enablement('attentionDebugger.resume'), 'isWorkspaceTrusted');
  assert.equal(enablement('attentionDebugger.openRun'), undefined, 'viewing needs no trust');
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  assert.match(readme, /Restricted Mode/, 'the README says what a workspace can make the extension do');
});

test('the icon is a 128×128 PNG', () => {
  const png = readFileSync(join(REPO, pkg.icon));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
});

test('engines.vscode is the oldest VS Code the integration tests run: the server setup-vscode.sh installs', (t) => {
  const server = join(REPO, '.vscode-test/code-server/node_modules/code-server/lib/vscode/package.json');
  // npm test's setup installs it first; only a bare `node scripts/run-tests.mjs` may lack it.
  if (!existsSync(server))
    return cannotRun(t, 'vscode', 'no VS Code server here: bash scripts/setup-vscode.sh installs it');
  const tested = readJson<{ version: string }>(server).version; // e.g. 1.100.3
  const [major, minor] = tested.split('.');
  assert.equal(pkg.engines.vscode, `^${major}.${minor}.0`, `the tests run VS Code ${tested}`);
  // vsce refuses an @types/vscode newer than engines.vscode.
  assert.equal(pkg.devDependencies['@types/vscode'], `^${major}.${minor}.0`);
});

test('the walkthrough: train, inspect a head, decode, open a run; each button runs a command that completes its step', () => {
  const commands = new Set(pkg.contributes.commands.map((c) => c.command));
  assert.equal(pkg.contributes.walkthroughs.length, 1);
  const steps = pkg.contributes.walkthroughs[0].steps;
  const ran: string[] = [];
  for (const s of steps) {
    const links = [...s.description.matchAll(/\]\(command:([\w.]+)(?:\?([^)]*))?\)/g)];
    assert.equal(links.length, 1, `step ${s.id} has one button`);
    const [, command, query] = links[0];
    assert.ok(commands.has(command), `step ${s.id}: ${command} is not a contributed command`);
    // Open a run folder completes when a folder opened (issue 26 item 15), not on a failed Open Run.
    const completes = s.id === 'openRun' ? 'onContext:attentionDebugger.runOpened' : `onCommand:${command}`;
    assert.deepEqual(s.completionEvents, [completes], `step ${s.id} completes when its command did its work`);
    const media = s.media.svg ?? s.media.image ?? s.media.markdown;
    assert.ok(media && existsSync(join(REPO, media)), `step ${s.id}: media ${media} exists`);
    if (s.media.svg || s.media.image) assert.ok(s.media.altText, `step ${s.id}: an image needs altText`);
    if (query) ran.push(`${command} ${decodeURIComponent(query)}`);
    else ran.push(command);
  }
  assert.deepEqual(ran, [
    'attentionDebugger.train {"data":{"kind":"task","task":"reverse"},"config":"tiny"}',
    'attentionDebugger.inspectHead',
    'attentionDebugger.decode',
    'attentionDebugger.openRun',
  ]);
});

test('README: Install comes first, with the VSIX line and then npm start for the demo; building from source follows', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => ({ title: m[1], at: m.index! }));
  assert.equal(sections[0]?.title, 'Install');
  const install = readme.slice(sections[0].at, sections[1]?.at);
  const vsixLine = install.indexOf(`code --install-extension attention-debugger-linux-x64-${pkg.version}.vsix`);
  const start = install.indexOf('npm start');
  assert.ok(vsixLine > 0, 'the Install section names the VSIX of this version');
  assert.ok(start > vsixLine, 'then npm start for the demo');
  assert.match(install, /\b\d+(\.\d+)? MB\b/, 'it states the size of the VSIX');
  assert.match(install, /extensionKind/, 'it says why the extension runs in the workspace');
  assert.ok(
    sections.findIndex((s) => /source/i.test(s.title)) > 0,
    'a section on building from source follows Install',
  );
});
