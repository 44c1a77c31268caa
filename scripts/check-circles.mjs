// No import circles: fails on any cycle among the repository's files (strongly connected components
// of more than one file, or a file that imports itself). Run by `npm run lint`. (What madge
// --circular does, without another dependency.) Two graphs, joined:
//   - what runs: every entry point bundled with esbuild (nothing written), which source file imports
//     which read from its metafile;
//   - what the type checker reads: every .ts file's imports as TypeScript's preProcessFile lists them,
//     `import type`, `export … from` and `import('…')` types included (esbuild drops `import type`, so
//     a circle closed by a type import alone was invisible), relative specifiers resolved to files.
// `node scripts/check-circles.mjs <folder>` checks only the .ts files under <folder>, by the second
// graph (test/lint/circles.test.ts plants circles there).
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const folder = process.argv[2] === undefined ? undefined : resolve(process.argv[2]);
const root = folder ?? repo;
process.chdir(root);

/** file → the repository files it imports (paths from `root`, with forward slashes) */
const graph = new Map();
const addEdges = (file, targets) => graph.set(file, [...new Set([...(graph.get(file) ?? []), ...targets])]);

if (!folder) {
  const webviews = readdirSync('webview', { recursive: true })
    .map((f) => f.replaceAll('\\', '/'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `webview/${f}`);
  const entryPoints = [
    'src/engine/cli/main.ts',
    'src/engine/index.ts',
    'src/extension/extension.ts',
    'src/debug/adapter.ts',
    ...webviews,
  ];
  const result = await esbuild.build({
    entryPoints,
    bundle: true,
    write: false,
    metafile: true,
    outdir: 'out/check-circles',
    platform: 'node',
    packages: 'external',
    external: ['vscode'],
    logLevel: 'silent',
  });
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    if (file.startsWith('node_modules/')) continue;
    addEdges(
      file,
      input.imports.filter((i) => !i.external && !i.path.startsWith('node_modules/')).map((i) => i.path),
    );
  }
}

/** Folders never read: dependencies, dot-folders, and (from the root) build outputs, runs and results. */
const SKIP = new Set(['out', 'dist', 'runs', 'test-artifacts', 'reports', 'bench/results']);
const isSource = (name) => /\.(ts|tsx|mts|cts)$/.test(name);
function sources(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = dir === '.' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.') && !SKIP.has(path)) found.push(...sources(path));
    } else if (entry.isFile() && isSource(entry.name)) found.push(path);
  }
  return found;
}

const isFile = (path) => existsSync(path) && statSync(path).isFile();
/** The file a relative specifier names, as TypeScript resolves it (`./a`, `./a.js`, `./a/index.ts`); undefined for packages. */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = join(dirname(from), specifier);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = [
    ...(stem !== base ? [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, `${stem}.d.ts`] : []),
    base,
    ...['.ts', '.tsx', '.d.ts', '/index.ts', '/index.tsx'].map((ext) => base + ext),
  ];
  const found = candidates.find(isFile);
  return found === undefined ? undefined : relative('.', found).split(sep).join('/');
}

const files = sources('.');
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  addEdges(
    file,
    importedFiles.map((i) => resolveSpecifier(file, i.fileName)).filter((f) => f !== undefined && isSource(f)),
  );
}

// Tarjan's strongly connected components.
let index = 0;
const stack = [];
const onStack = new Set();
const idx = new Map();
const low = new Map();
const cycles = [];
function connect(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!idx.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) !== idx.get(v)) return;
  const component = [];
  let w;
  do {
    w = stack.pop();
    onStack.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
}
for (const v of graph.keys()) if (!idx.has(v)) connect(v);

const where = folder ? ` in ${folder}` : '';
if (cycles.length) {
  console.error(`check-circles: ${cycles.length} import circle(s)${where} (type imports count too):`);
  for (const c of cycles) console.error(`  ${c.join(' ↔ ')}`);
  process.exit(1);
}
console.log(`check-circles: no import circles among ${graph.size} files${where}, type imports included`);
