/**
 * The lint rules that keep the rooms (docs/ARCHITECTURE.md): each planted import below must be
 * reported by `npm run lint`'s ESLint configuration, and the allowed ones must not.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import { REPO } from '../helpers';

const eslint = new ESLint({ cwd: REPO });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(REPO, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

test('the engine never imports vscode', async () => {
  const found = await problems('src/engine/model/planted.ts', "import * as vscode from 'vscode';\nvoid vscode;\n");
  assert.equal(found.length, 1);
  assert.match(found[0], /the engine never imports vscode/);
});

test("the engine's rooms never import its JSON-RPC side upward; the command line may", async () => {
  for (const [file, spec] of [
    ['src/engine/run/planted.ts', '../server/convert'],
    ['src/engine/inspect/planted.ts', '../server'],
    ['src/engine/planted.ts', './server/rpc'],
  ]) {
    const found = await problems(file, `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `${file} importing ${spec} is not reported`);
    assert.match(found[0], /only cli\/ imports server\//);
  }
  assert.deepEqual(
    await problems('src/engine/cli/planted.ts', "import { runServer } from '../server';\nvoid runServer;\n"),
    [],
  );
  assert.deepEqual(
    await problems('src/engine/server/planted.ts', "import { handle } from './rpc';\nvoid handle;\n"),
    [],
  );
  // The rule beside it keeps the engine's first one: vscode is still refused in those rooms.
  const vscode = await problems('src/engine/run/planted.ts', "import * as vscode from 'vscode';\nvoid vscode;\n");
  assert.equal(vscode.length, 1);
  assert.match(vscode[0], /the engine never imports vscode/);
});

test('the extension never imports tfjs', async () => {
  const code = "import * as tf from '@tensorflow/tfjs-core';\nvoid tf;\n";
  const found = await problems('src/extension/planted.ts', code);
  assert.equal(found.length, 1);
  assert.match(found[0], /the extension never imports tfjs/);
});

test('the extension imports of the engine only its pure readers of run files', async () => {
  for (const spec of ['../engine/model/transformer', '../engine/server', '../engine', '../../engine/io/atomicFile']) {
    const found = await problems('src/extension/planted.ts', `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `${spec} is not reported`);
    assert.match(found[0], /the extension imports only its pure readers/);
  }
  for (const spec of ['../engine/io/json', '../engine/io/regularFile', '../engine/run/savedHeadReport'])
    assert.deepEqual(await problems('src/extension/planted.ts', `import * as x from '${spec}';\nvoid x;\n`), [], spec);
});

test('webview code never imports Node, vscode, tfjs or the Node-only wire codec', async () => {
  for (const spec of ['node:fs', 'fs', 'child_process', 'vscode', '@tensorflow/tfjs-core', '../src/protocol/wire']) {
    const found = await problems('webview/planted.ts', `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `${spec} is not reported`);
    assert.match(found[0], /webview code runs in a browser/);
  }
});

test("a page's folder imports only its own panel's messages; webview's shared files, none", async () => {
  for (const [file, spec] of [
    ['webview/attention/planted.ts', '../../src/protocol/pages/head'],
    ['webview/dashboard/planted.ts', '../../src/protocol/pages/attention'],
    ['webview/beam/planted.ts', '../../src/protocol/pages/heads'],
    ['webview/planted.ts', '../src/protocol/pages/attention'],
  ]) {
    const found = await problems(file, `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `${file} importing ${spec} is not reported`);
    assert.match(found[0], /imports only its own panel's messages|import no panel's messages/);
  }
  for (const [file, spec] of [
    ['webview/attention/planted.ts', '../../src/protocol/pages/attention'],
    ['webview/head/planted.ts', '../../src/protocol/webview'],
  ])
    assert.deepEqual(await problems(file, `import * as x from '${spec}';\nvoid x;\n`), [], `${file} importing ${spec}`);
  // A page's folder still runs in a browser.
  const node = await problems('webview/heads/planted.ts', "import * as x from 'node:fs';\nvoid x;\n");
  assert.equal(node.length, 1);
  assert.match(node[0], /webview code runs in a browser/);
});

test('the protocol imports nothing heavy; what each room may import passes', async () => {
  assert.equal((await problems('src/protocol/planted.ts', "import { x } from 'node:fs';\nvoid x;\n")).length, 1);
  assert.deepEqual(
    await problems('src/engine/planted.ts', "import * as tf from '@tensorflow/tfjs-core';\nvoid tf;\n"),
    [],
  );
  assert.deepEqual(
    await problems('webview/planted.ts', "import { headMap } from '../src/protocol/attention';\nvoid headMap;\n"),
    [],
  );
});

test('algorithms/ (the pure algorithms) imports nothing but itself; the protocol, the engine and the pages import it', async () => {
  for (const spec of [
    '../protocol/attention',
    'vscode',
    'node:fs',
    '@tensorflow/tfjs-core',
    '../engine/model/config',
  ]) {
    const found = await problems('src/algorithms/planted.ts', `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `src/algorithms importing ${spec} is not reported`);
    assert.match(found[0], /algorithms\/ imports nothing but itself/);
  }
  assert.deepEqual(
    await problems('src/algorithms/planted.ts', "import { POOL_ABOVE } from './pool';\nvoid POOL_ABOVE;\n"),
    [],
  );
  for (const [file, spec] of [
    ['src/protocol/planted.ts', '../algorithms/pool'],
    ['src/engine/planted.ts', '../algorithms/pool'],
    ['src/extension/planted.ts', '../algorithms/history'],
    ['webview/planted.ts', '../src/algorithms/pool'],
  ])
    assert.deepEqual(await problems(file, `import * as x from '${spec}';\nvoid x;\n`), [], `${file} importing ${spec}`);
});

test('the model sees only the ops interface: model/ never imports backend/; ops/ may', async () => {
  for (const spec of ['../backend/trainingOps', '../backend', '../backend/wasm/native', '../backend/webgpu']) {
    const found = await problems('src/engine/model/planted.ts', `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `model/ importing ${spec} is not reported`);
    assert.match(found[0], /model\/ sees only the ops interface/);
  }
  assert.deepEqual(
    await problems('src/engine/ops/planted.ts', "import * as x from '../backend/trainingOps';\nvoid x;\n"),
    [],
  );
  // The rooms' rules still hold in model/: vscode and server/ are refused there too.
  assert.equal((await problems('src/engine/model/planted.ts', "import * as v from 'vscode';\nvoid v;\n")).length, 1);
  assert.equal((await problems('src/engine/model/planted.ts', "import * as s from '../server';\nvoid s;\n")).length, 1);
  // And every file of model/ as it stands passes.
  const results = await eslint.lintFiles(['src/engine/model/*.ts']);
  const found = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-restricted-imports'));
  assert.deepEqual(
    found.map((m) => m.message),
    [],
  );
});

test('the debug adapter never imports vscode, tfjs or the engine beyond its telemetry conditions', async () => {
  for (const spec of [
    'vscode',
    '@tensorflow/tfjs-core',
    '../engine/model/transformer',
    '../engine/telemetry/heads',
    '../extension/engineClient',
  ]) {
    const found = await problems('src/debug/planted.ts', `import * as x from '${spec}';\nvoid x;\n`);
    assert.equal(found.length, 1, `${spec} is not reported`);
    assert.match(found[0], /the debug adapter is a process of its own/);
  }
  // The watch conditions' parser and the head ids are plain code (no tfjs): the adapter checks breakpoints with them.
  for (const spec of [
    '../engine/telemetry/watch',
    '../engine/telemetry/telemetry',
    '../protocol/methods',
    './engine', // the adapter's own engine.ts
    'node:child_process',
  ])
    assert.deepEqual(await problems('src/debug/planted.ts', `import * as x from '${spec}';\nvoid x;\n`), [], spec);
});
