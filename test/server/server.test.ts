/**
 * The engine's JSON-RPC server over a real child process's stdio, as the extension's client uses it.
 * This file is its own child: run with ENGINE_SERVER_CHILD=1 it serves instead of testing, so the
 * test needs neither VS Code nor the CLI.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { runServer } from '../../src/engine/server';

if (process.env['ENGINE_SERVER_CHILD'] === '1') {
  void runServer({}).then((code) => (process.exitCode = code));
} else {
  const version = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')).version as string;

  const start = (): {
    conn: MessageConnection;
    exited: Promise<number | null>;
    readErrors: unknown[];
    logs: unknown[];
  } => {
    const child = spawn(process.execPath, [__filename], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ENGINE_SERVER_CHILD: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const readErrors: unknown[] = [];
    const logs: unknown[] = [];
    const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onError(([err]) => readErrors.push(err)); // anything but JSON-RPC on stdout lands here
    conn.onNotification('engine/log', (params: unknown) => logs.push(params));
    conn.listen();
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        if (code !== 0) console.error(`engine server stderr:\n${stderr}`);
        resolve(code);
      }),
    );
    return { conn, exited, readErrors, logs };
  };

  test('engine/info names the active backend among those that load, and the package version', async () => {
    const { conn, exited, readErrors, logs } = start();
    const info = (await conn.sendRequest('engine/info')) as { version: string; backend: string; backends: string[] };
    assert.equal(info.version, version);
    assert.ok(['webgpu', 'tensorflow', 'wasm', 'cpu'].includes(info.backend), info.backend);
    assert.ok(info.backends.includes(info.backend));
    assert.ok(info.backends.includes('cpu'), 'the pure-JS backend always loads');
    assert.ok(
      logs.some((l) => (l as { message: string }).message.includes(`tfjs backend: ${info.backend}`)),
      'engine/log reports the backend',
    );
    assert.deepEqual(readErrors, [], 'stdout carries nothing but JSON-RPC');
    conn.end(); // closes the engine's stdin: it must exit on its own
    conn.dispose();
    assert.equal(await exited, 0);
  });

  test('malformed requests get InvalidParams naming the method; unknown methods MethodNotFound', async () => {
    const { conn, exited } = start();
    await assert.rejects(conn.sendRequest('engine/info', { verbose: true }), {
      code: -32602,
      message: 'engine/info params must be empty, got object',
    });
    await assert.rejects(conn.sendRequest('engine/info', 1, 2), {
      code: -32602,
      message: 'engine/info params must be sent by name (an object), not by position (an array)',
    });
    await assert.rejects(conn.sendRequest('engine/nope'), { code: -32601 });
    conn.end();
    conn.dispose();
    assert.equal(await exited, 0);
  });

  test('an oversized positional request is refused naming its limit, and the engine answers the next one', async () => {
    const { conn, exited } = start();
    // 100,000 positions × d_model 1,024 once exhausted the heap after a minute and took the engine down.
    await assert.rejects(conn.sendRequest('positional', { dModel: 1024, positions: 100_000 }), {
      code: -32602,
      message: 'positional params.positions must be a whole number from 1 to 16384, got 100000',
    });
    await assert.rejects(conn.sendRequest('positional', { dModel: 8192, positions: 16384 }), {
      code: -32602,
      message:
        'positional params: positions × dModel is 134,217,728 values, more than the 4,194,304 a view can show; ' +
        'ask for fewer positions',
    });
    const ok = (await conn.sendRequest('positional', { dModel: 16, positions: 4 })) as { shape: number[] };
    assert.deepEqual(ok.shape, [4, 16]);
    conn.end();
    conn.dispose();
    assert.equal(await exited, 0);
  });
}
