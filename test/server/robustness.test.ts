/**
 * The real `serve` process (dist/cli.js) under what a broken or hostile client sends: bad framing,
 * malformed JSON, oversized requests and two train/start at once. Each bad frame gets a parse
 * error (−32700) naming what was wrong; after each, engine/info answers and a short train/start
 * runs to its end.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { copyConfig } from '../helpers';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const dir = scratch('ad-robust-');
const engine = new RawEngine();
after(() => engine.proc.kill());

/** engine/info answers, and a 3-step run trains to its end. */
async function stillServes(name: string): Promise<void> {
  const info = await engine.request('engine/info');
  assert.equal((info.result as { backend: string }).backend, 'cpu', `engine/info after ${name}`);
  const runDir = join(dir, `after-${name}`);
  const started = await engine.request('train/start', {
    runDir,
    data: { kind: 'task', task: 'copy' },
    config: copyConfig(dir, { steps: 3, checkpoint_every: 3 }),
  });
  assert.equal(started.error, undefined, `train/start after ${name}: ${started.error?.message}`);
  await engine.until(`the run after ${name} to end`, () =>
    engine.messages.find((m) => m.method === 'train/ended' && m.params?.runDir === runDir),
  );
}

test('bad frames each get a parse error naming the fault; the frames after them are answered', async () => {
  const cases: [string, string, RegExp][] = [
    ['malformed JSON', 'Content-Length: 20\r\n\r\n{"jsonrpc":"2.0","id"', /malformed JSON/],
    [
      'a short body',
      'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0","id":99,"method":"engine/info"}',
      /body of \d+ bytes/,
    ],
    ['a header without its length', 'Content-Lenght: 5\r\n\r\nhello', /without Content-Length/],
    ['a JSON array', 'Content-Length: 2\r\n\r\n[]', /not a JSON object/],
    ['a 1 GB frame', 'Content-Length: 1073741824\r\n\r\n{', /1073741824 bytes, more than/],
  ];
  for (const [name, bytes, why] of cases) {
    const before = engine.parseErrors().length;
    engine.raw(bytes);
    // A short body is found by the next frame's header (or after 2 s of silence).
    const info = await engine.request('engine/info');
    assert.ok(info.result, `engine/info right after ${name}`);
    const errors = await engine.until(`the parse error of ${name}`, () => {
      const e = engine.parseErrors();
      return e.length > before ? e : undefined;
    });
    assert.match(errors[before]!, why, name);
  }
  assert.equal(
    engine.messages.find((m) => m.id === 99),
    undefined,
    'the short frame was not half-read as a request',
  );
  await stillServes('bad-frames');
});

test('oversized requests are refused by their validators, naming the limit', async () => {
  const big = await engine.request('positional', { dModel: 1024, positions: 100_000 });
  assert.equal(big.error?.code, -32602);
  assert.match(big.error!.message, /positions must be a whole number from 1 to 16384/);
  const beam = await engine.request('attention/get', {
    runDir: join(dir, 'after-bad-frames'),
    input: { kind: 'text', src: '4 5 6' },
    beam: 100_000,
  });
  assert.match(beam.error?.message ?? '', /beam must be a whole number from 1 to 64, got 100000/);
  const ids = await engine.request('attention/get', {
    runDir: join(dir, 'after-bad-frames'),
    input: { kind: 'ids', src: Array.from({ length: 10_000 }, () => 4) },
  });
  assert.match(ids.error?.message ?? '', /src has 10000 tokens, more than the 8192 an input may have/);
  const steps = await engine.request('train/start', {
    runDir: join(dir, 'huge'),
    data: { kind: 'task', task: 'copy' },
    config: 'tiny',
    batchTokens: 1e9,
  });
  assert.match(steps.error?.message ?? '', /batchTokens must be a whole number from 1 to 1000000/);
  // Paths: relative ones are refused (relative to which folder?); a 50 MB one is named by its length only.
  const relative = await engine.request('run/open', { runDir: 'runs/x' });
  assert.equal(
    relative.error?.message,
    'run/open params.runDir must be an absolute path, got "runs/x" (relative to which folder?)',
  );
  const long = await engine.request('run/open', { runDir: `/${'a'.repeat(50 << 20)}` });
  assert.equal(long.error?.message, "run/open params.runDir is 52428801 characters long, more than a path's 4096");
  await stillServes('oversized');
});

test('two train/start at once: one starts, the other is refused, and stopping ends the one', async () => {
  const config = copyConfig(scratch('ad-robust-long-'), { steps: 100_000 });
  const params = (name: string) => ({ runDir: join(dir, name), data: { kind: 'task', task: 'copy' }, config });
  const [a, b] = await Promise.all([
    engine.request('train/start', params('a')),
    engine.request('train/start', params('b')),
  ]);
  const started = [a, b].filter((r) => r.result);
  const refused = [a, b].filter((r) => r.error);
  assert.equal(started.length, 1, 'exactly one starts');
  assert.match(refused[0]!.error!.message, /a run is already training/);
  const stop = await engine.request('train/stop');
  assert.ok(stop.result, 'the started run stops');
  await engine.until('its end', () =>
    engine.messages.find((m) => m.method === 'train/ended' && m.params?.reason === 'stopped'),
  );
  await stillServes('concurrent-starts');
});
