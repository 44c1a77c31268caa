// The repository's TypeScript for a script of scripts/: `exports` lines (e.g. "export { viridis } from
// './webview/lib/colormap';", paths from the repository's root) bundled by esbuild in memory and
// imported, so that a script draws and reads with the product's own code.
import { Buffer } from 'node:buffer';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function projectCode(exports) {
  const out = await build({
    stdin: { contents: exports.join('\n'), resolveDir: repo, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'error',
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}
