// Builds and writes a platform-specific VSIX: what `code --install-extension FILE` installs.
//
//   npm run package [-- --target T|all] [--out FILE] [--stage DIR] [--sourcemaps] [--no-native]
//
// T is one of the targets the `webgpu` package ships Dawn for (default: this machine's, e.g.
// linux-x64); `all` writes one VSIX each. The VSIX holds only what runs, staged in
// out/package/<T>/ and packed there by `vsce package --target T`:
//   - dist/cli.js (the engine), dist/extension.js, dist/debugAdapter.js, dist/webview/*.js: bundled again here, without
//     source maps unless --sourcemaps (dist/engine.js, the library entry, is not loaded by the extension);
//   - dist/native/blas.node, the native kernels, compiled for T (this machine's compiler for its own
//     target, aarch64-linux-gnu-gcc for linux-arm64 when installed; other targets go without and
//     the engine says so);
//   - node_modules: only the files loaded at run time (RUNTIME below): Dawn for T alone, tfjs's
//     wasm binaries, plotly for the panels;
//   - package.json (without scripts and dev dependencies), README.md, CHANGELOG.md, LICENSE, media/.
// test/vscode/vsix/ checks the contents (`vsce ls`) and installs the VSIX into a fresh VS Code server.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { buildWebview } from './build-webview.mjs';
import { external, nodeBundle } from './esbuild-options.mjs';

const require = createRequire(import.meta.url);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => console.log(`[package] ${msg}`);
function fail(msg) {
  console.error(`[package] ${msg}`);
  process.exit(1);
}

/** Where a package of node_modules is (the one the bundles were built against). */
function packageDir(name) {
  try {
    return dirname(require.resolve(`${name}/package.json`, { paths: [repo] }));
  } catch {
    return fail(`${name} is not installed: run npm ci first`);
  }
}

/** Targets: the folders of webgpu's dist/ (darwin-universal serves both Mac targets). */
function webgpuTargets() {
  const dirs = readdirSync(join(packageDir('webgpu'), 'dist'));
  return dirs.flatMap((d) => (d === 'darwin-universal' ? ['darwin-x64', 'darwin-arm64'] : [d])).sort();
}
const webgpuDir = (target) => (target.startsWith('darwin-') ? 'darwin-universal' : target);

/**
 * What the bundles load from node_modules at run time, and which of each package's files: the
 * externals of scripts/esbuild-options.mjs, and plotly, which the panels load into their pages.
 */
const RUNTIME = {
  webgpu: (target) => ['package.json', 'index.js', 'LICENSE.md', `dist/${webgpuDir(target)}`],
  '@tensorflow/tfjs-backend-wasm': () => [
    'package.json',
    ...readdirSync(join(packageDir('@tensorflow/tfjs-backend-wasm'), 'dist'))
      .filter((f) => f.endsWith('.wasm'))
      .map((f) => `dist/${f}`),
  ],
  'plotly.js-dist-min': () => ['package.json', 'plotly.min.js', 'LICENSE'],
};
/** Externals that the VSIX does not carry: VS Code provides vscode; tfjs-node only if the user installed it. */
const NOT_SHIPPED = ['vscode', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu'];
/** Of a shipped package's manifest, what Node reads; its dependencies are bundled or not needed. */
const MANIFEST_KEYS = ['name', 'version', 'description', 'license', 'type', 'main'];

function checkExternals() {
  for (const spec of external) {
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
    if (!(name in RUNTIME) && !NOT_SHIPPED.includes(name))
      fail(`scripts/esbuild-options.mjs keeps ${spec} external: add ${name} to RUNTIME in scripts/package.mjs`);
  }
}

function onPath(cmd) {
  return (process.env.PATH ?? '').split(delimiter).some((d) => existsSync(join(d, cmd)));
}

/** Debian's cross compiler for linux-arm64 and its C library headers. */
const CROSS_PACKAGES = 'gcc-aarch64-linux-gnu libc6-dev-arm64-cross';

/** The C compiler for target's native kernels, or why there is none. */
function nativeCompiler(target, host) {
  if (target === host) return { cc: process.env.CC || 'cc' };
  if (target === 'linux-arm64' && process.platform === 'linux') {
    if (onPath('aarch64-linux-gnu-gcc') && existsSync('/usr/aarch64-linux-gnu/include/stdio.h'))
      return { cc: 'aarch64-linux-gnu-gcc' };
    return { why: `no cross compiler here (sudo apt-get install ${CROSS_PACKAGES})` };
  }
  return { why: `it is built on ${target} itself (npm run package there)` };
}

async function bundle(stage, sourcemap) {
  const common = { ...nodeBundle, sourcemap };
  await esbuild.build({
    ...common,
    entryPoints: { cli: join(repo, 'src/engine/cli/main.ts') },
    outdir: join(stage, 'dist'),
  });
  await esbuild.build({
    ...common,
    entryPoints: { extension: join(repo, 'src/extension/extension.ts') },
    outdir: join(stage, 'dist'),
  });
  await esbuild.build({
    ...common,
    entryPoints: { debugAdapter: join(repo, 'src/debug/adapter.ts') },
    outdir: join(stage, 'dist'),
  });
  await buildWebview({ outdir: join(stage, 'dist', 'webview'), sourcemap });
}

function copyRuntime(stage, target) {
  for (const [name, files] of Object.entries(RUNTIME)) {
    const from = packageDir(name);
    const to = join(stage, 'node_modules', name);
    for (const f of files(target)) {
      if (!existsSync(join(from, f))) fail(`${name}/${f} is missing from node_modules: run npm ci`);
      if (f === 'package.json') {
        const m = JSON.parse(readFileSync(join(from, f), 'utf8'));
        const kept = Object.fromEntries(MANIFEST_KEYS.filter((k) => k in m).map((k) => [k, m[k]]));
        mkdirSync(to, { recursive: true });
        writeFileSync(join(to, f), JSON.stringify(kept, null, 2) + '\n');
      } else cpSync(join(from, f), join(to, f), { recursive: true });
    }
  }
}

/** The manifest as installed: no scripts, dev tools or CLI; its dependencies are the staged packages. */
function stageManifest(stage) {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  for (const k of ['scripts', 'devDependencies', 'optionalDependencies', 'bin', 'exports']) delete pkg[k];
  pkg.dependencies = Object.fromEntries(
    Object.keys(RUNTIME).map((name) => [
      name,
      JSON.parse(readFileSync(join(packageDir(name), 'package.json'))).version,
    ]),
  );
  writeFileSync(join(stage, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
}

function vsce(args, cwd) {
  const bin = join(packageDir('@vscode/vsce'), 'vsce');
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) fail(`vsce ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

async function packageTarget(target, opts) {
  const host = `${process.platform}-${process.arch}`;
  const stage = opts.stage ? resolve(opts.stage) : join(repo, 'out', 'package', target);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  say(`${target}: staging in ${relative(repo, stage) || stage}`);

  await bundle(stage, opts.sourcemaps);
  if (opts.native) {
    const { cc, why } = nativeCompiler(target, host);
    if (cc) {
      const out = join(stage, 'dist', 'native', 'blas.node');
      const r = spawnSync(
        process.execPath,
        [join(repo, 'scripts', 'build-native.mjs'), '--strict', '--force', '--out', out],
        { stdio: 'inherit', env: { ...process.env, CC: cc } },
      );
      if (r.status !== 0)
        fail(
          `the native kernels did not build for ${target} (see above): ` +
            (target === host
              ? "install a C compiler (sudo apt-get install gcc) and Node's headers (node_api.h; build-native says where it looked)"
              : `sudo apt-get install ${CROSS_PACKAGES}`) +
            ', or package without them: --no-native',
        );
    } else say(`${target}: no native kernels, since ${why}; the engine will say it runs on plain wasm`);
  }
  copyRuntime(stage, target);
  stageManifest(stage);
  for (const f of ['README.md', 'CHANGELOG.md', 'LICENSE']) copyFileSync(join(repo, f), join(stage, f));
  cpSync(join(repo, 'media'), join(stage, 'media'), { recursive: true });
  // The stage holds only what runs; the file keeps vsce from warning that nothing filters it (and any map out).
  writeFileSync(join(stage, '.vscodeignore'), opts.sourcemaps ? '' : '**/*.map\n');

  const out = resolve(
    opts.out ??
      join(repo, `attention-debugger-${target}-${JSON.parse(readFileSync(join(stage, 'package.json'))).version}.vsix`),
  );
  mkdirSync(dirname(out), { recursive: true });
  vsce(['package', '--target', target, '--out', out], stage);
  say(`${target}: ${out} (${(statSync(out).size / 1e6).toFixed(1)} MB)`);
  return out;
}

function parseArgs(argv) {
  const opts = { targets: [], sourcemaps: false, native: true, out: undefined, stage: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--target') opts.targets.push(...value().split(','));
    else if (a === '--out') opts.out = value();
    else if (a === '--stage') opts.stage = value();
    else if (a === '--sourcemaps') opts.sourcemaps = true;
    else if (a === '--no-native') opts.native = false;
    else fail(`unknown argument ${a} (see the top of scripts/package.mjs)`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const known = webgpuTargets();
const host = `${process.platform}-${process.arch}`;
let targets = opts.targets.length ? opts.targets : [host];
if (targets.includes('all')) targets = known;
for (const t of targets)
  if (!known.includes(t)) fail(`no target ${t}: the webgpu package ships Dawn for ${known.join(', ')}`);
if (targets.length > 1 && (opts.out || opts.stage)) fail('--out and --stage name one VSIX: give one --target');
checkExternals();
for (const t of targets) await packageTarget(t, opts);
