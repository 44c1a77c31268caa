// No import circles: bundles every entry point with esbuild (nothing written), reads which source
// file imports which from its metafile, and fails on any cycle among the repository's files
// (strongly connected components of more than one file, or a file that imports itself). Run by
// `npm run lint`. (What madge --circular does, without another dependency.)
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const webviews = readdirSync('webview')
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => `webview/${f}`);
const entryPoints = ['src/engine/cli/main.ts', 'src/engine/index.ts', 'src/extension/extension.ts', ...webviews];
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

/** file → the repository files it imports */
const graph = new Map();
for (const [file, input] of Object.entries(result.metafile.inputs)) {
  if (file.startsWith('node_modules/')) continue;
  graph.set(
    file,
    input.imports.filter((i) => !i.external && !i.path.startsWith('node_modules/')).map((i) => i.path),
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

if (cycles.length) {
  console.error(`check-circles: ${cycles.length} import circle(s):`);
  for (const c of cycles) console.error(`  ${c.join(' ↔ ')}`);
  process.exit(1);
}
console.log(`check-circles: no import circles among ${graph.size} files`);
