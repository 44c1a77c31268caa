// What a VSIX of this extension may and must hold, as paths relative to the extension's root (what
// `vsce ls` prints). Written down apart from scripts/package.mjs, which stages the VSIX,
// so that the one checks the other.
import { Buffer } from 'node:buffer';

/** Dawn's folder in the webgpu package for a VSIX target (one build serves both Macs). */
export const webgpuDir = (target) => (target.startsWith('darwin-') ? 'darwin-universal' : target);

/** The packages of node_modules the extension loads at run time. */
export const LOADED_PACKAGES = ['webgpu', '@tensorflow/tfjs-backend-wasm', 'plotly.js-dist-min'];

const NEVER = [
  [/^src\//, 'TypeScript sources (dist/ holds the bundles)'],
  [/^test\//, 'tests'],
  [/^bench\//, 'benchmarks'],
  [/^native\/.*\.[ch]$/, 'C sources of the native kernels (dist/native/blas.node is built)'],
  [/(^|\/)fixtures\//, 'test fixtures'],
  [/^\.vscode-test\//, "the tests' VS Code"],
  [/^python\//, 'the PyTorch writer'],
  [/^(scripts|bin|demo|docs|webview|out)\//, 'development files'],
  [/\.map$/, 'source maps'],
  [/\.ts$/, 'TypeScript'],
];

/** Each path that must not be in the VSIX for `target`, with why. */
export function offences(paths, target) {
  const found = [];
  for (const p of paths) {
    for (const [re, why] of NEVER) if (re.test(p)) found.push(`${p}: ${why}`);
    const dawn = /^node_modules\/webgpu\/dist\/([^/]+)\//.exec(p);
    if (dawn && dawn[1] !== webgpuDir(target)) found.push(`${p}: Dawn for ${dawn[1]}, not ${target}`);
    const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p);
    if (pkg && !LOADED_PACKAGES.includes(pkg[1])) found.push(`${p}: ${pkg[1]} is not loaded at run time`);
  }
  return found;
}

/** Paths a working VSIX for `target` must hold (native: whether its native kernels were built). */
export function required(target, { native }) {
  return [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'media/icon.png',
    'dist/cli.js',
    'dist/extension.js',
    'dist/debugAdapter.js',
    // The panels' pages, and the run report's page, which the engine inlines into the report (src/engine/report/html.ts).
    ...['dashboard', 'attention', 'head', 'positional', 'heads', 'report'].map((p) => `dist/webview/${p}.js`),
    ...(native ? ['dist/native/blas.node'] : []),
    `node_modules/webgpu/dist/${webgpuDir(target)}/dawn.node`,
    'node_modules/webgpu/index.js',
    'node_modules/webgpu/package.json',
    'node_modules/@tensorflow/tfjs-backend-wasm/package.json',
    'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm',
    'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm',
    'node_modules/plotly.js-dist-min/plotly.min.js',
  ];
}

/** The names of a zip's entries, from its central directory (a VSIX is a zip; no unzip needed). */
export function zipEntries(zip) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip: no end of central directory');
  const count = zip.readUInt16LE(eocd + 10);
  const names = [];
  for (let at = zip.readUInt32LE(eocd + 16), i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip: bad central directory entry at ${at}`);
    const [nameLength, extraLength, commentLength] = [28, 30, 32].map((o) => zip.readUInt16LE(at + o));
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}
