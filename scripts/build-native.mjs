// Compiles native/blas.c and ops.c (the OpenBLAS matmul and fused kernels addon) to dist/native/blas.node with the system C
// compiler and Node's own headers. Optional: when it cannot be built, the engine runs on plain
// wasm and says so (engine info); this script then warns and exits 0.
//   node scripts/build-native.mjs [--strict] [--force] [--out FILE]
//   (--strict: a failure is an error; --force: build even when up to date; CC picks the compiler)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sources = ['blas.c', 'ops.c', 'norm.c', 'attention.c'].map((f) => join(repo, 'native', f));
const headers = ['args.h', 'blas.h', 'glibc-compat.h'].map((f) => join(repo, 'native', f));
const outAt = process.argv.indexOf('--out'); // scripts/package.mjs builds the VSIX's copy elsewhere
const target = outAt > 0 ? resolve(process.argv[outAt + 1]) : join(repo, 'dist', 'native', 'blas.node');
const strict = process.argv.includes('--strict');

function fail(why) {
  console.error(`build-native: ${why}; the engine will multiply on wasm alone (slower)`);
  process.exit(strict ? 1 : 0);
}

// Node's headers: next to this node (Debian: /usr/include/node), npm's nodedir, or node-gyp's cache.
const includeDirs = [
  join(dirname(process.execPath), '..', 'include', 'node'),
  process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include', 'node'),
  join(process.env.HOME ?? '', '.cache', 'node-gyp', process.versions.node, 'include', 'node'),
].filter(Boolean);
const include = includeDirs.find((d) => existsSync(join(d, 'node_api.h')));
if (!include) fail(`no node_api.h in ${includeDirs.join(', ')}`);

const newest = Math.max(...[...sources, ...headers].map((f) => statSync(f).mtimeMs));
if (existsSync(target) && statSync(target).mtimeMs > newest && !process.argv.includes('--force')) process.exit(0);
mkdirSync(dirname(target), { recursive: true });
const cc = process.env.CC || 'cc';
const tmp = `${target}.tmp-${process.pid}`;
// -fno-math-errno lets expf and sqrtf inline; no -ffast-math: NaN and ∞ must behave as in tfjs.
const args = [
  '-O3',
  '-fno-math-errno',
  '-fPIC',
  '-shared',
  '-std=c11',
  '-Wall',
  '-Wextra',
  '-Werror',
  '-Wno-psabi',
  `-I${include}`,
  // Older glibc versions of dlopen, dlsym and log, so the addon loads on glibc 2.28 (native/glibc-compat.h).
  ...(process.platform === 'linux' ? ['-include', join(repo, 'native', 'glibc-compat.h')] : []),
  ...sources,
  '-o',
  tmp,
  '-ldl',
  '-lm',
];
const r = spawnSync(cc, args, { stdio: ['ignore', 'inherit', 'inherit'] });
if (r.error) fail(`${cc}: ${r.error.message}`);
if (r.status !== 0) fail(`${cc} ${args.join(' ')} exited with ${r.status}`);
renameSync(tmp, target); // whole file or none: a running engine may be loading the old one
console.log(`build-native: ${target}`);
