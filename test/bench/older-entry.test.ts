/**
 * bench/lib/olderEntry.mjs: this tree's bench entry made to bundle against an older engine (the GPU
 * kit's "before"). Each statement esbuild cannot resolve, or the name an older module lacks, becomes
 * `undefined` with the line count kept; other lines stay as they were. Expected texts worked by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
// @ts-expect-error: a plain ES module of the benches, without types
import { stubFor } from '../../bench/lib/olderEntry.mjs';

const ENTRY = [
  "import * as tf from '@tensorflow/tfjs-core';",
  "import { TILED, TILED_GRAD } from '../../src/engine/backend/tiledAttention';",
  "export { initBackend, matMulDetail } from '../../src/engine/backend';",
  'export {',
  '  gemm,',
  '  checkTiles as tiles,',
  "} from '../../src/engine/backend/webgpu/gemm';",
  "export { type Batch } from '../../src/engine/data/batchStream';",
];

test('a module the older tree lacks: its names are stubbed, imported or exported, multi-line kept as lines', () => {
  const lines = [...ENTRY];
  assert.equal(stubFor(lines, 'Could not resolve "../../src/engine/backend/tiledAttention"', 2), true);
  assert.equal(stubFor(lines, 'Could not resolve "../../src/engine/backend/webgpu/gemm"', 5), true);
  assert.deepEqual(lines, [
    ENTRY[0],
    'const TILED = undefined, TILED_GRAD = undefined;',
    ENTRY[2],
    'export const gemm = undefined, tiles = undefined;',
    '',
    '',
    '',
    ENTRY[7],
  ]);
});

test('a name an older module lacks: that name alone is stubbed, the others still come from the module', () => {
  const lines = [...ENTRY];
  const text = 'No matching export in "src/engine/backend/index.ts" for import "matMulDetail"';
  assert.equal(stubFor(lines, text, 3), true);
  assert.equal(
    lines[2],
    "export { initBackend } from '../../src/engine/backend'; export const matMulDetail = undefined;",
  );
  assert.equal(lines.length, ENTRY.length);
  // Another kind of error is not this function's to mend.
  assert.equal(stubFor(lines, 'Unexpected "}"', 1), false);
});
