/**
 * The engine's wire under messages vscode-jsonrpc mishandles (issue 27 item 8), sent to the real
 * `serve` process: a request whose id is an object (it went unanswered), a 100 MB request (refused,
 * but with 1,526 error frames over 31 s: one per chunk of its body) and params sent as an array
 * (described as "a string"). Each gets one error that says what was wrong, and the request after
 * it is answered.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { RawEngine } from './rawEngine';

const engine = new RawEngine();
after(() => engine.proc.kill());

/** The errors with id null received after the first `from` messages. */
const nullIdErrors = (from: number) => engine.messages.slice(from).filter((m) => m.id === null && m.error);

async function stillAnswers(after: string): Promise<void> {
  const info = await engine.request('engine/info');
  assert.ok(info.result, `engine/info after ${after}: ${JSON.stringify(info.error)}`);
}

test('a request whose id is an object gets Invalid Request with id null (JSON-RPC 2.0 §5)', async () => {
  const from = engine.messages.length;
  engine.frame(JSON.stringify({ jsonrpc: '2.0', id: { n: 1 }, method: 'engine/info' }));
  const [reply] = await engine.until('the reply to the object id', () => {
    const e = nullIdErrors(from);
    return e.length ? e : undefined;
  });
  assert.equal(reply!.error!.code, -32600);
  assert.match(reply!.error!.message, /id is an object: an id is a string, a number or null/);
  await stillAnswers('an object id');
});

test('a 100 MB request is refused with one error, at once, and the next request is answered', async () => {
  const size = 100 << 20;
  const body = Buffer.alloc(size, 'a');
  Buffer.from('{"jsonrpc":"2.0","id":77,"method":"engine/info","params":{"pad":"').copy(body);
  Buffer.from('"}}').copy(body, size - 3);
  const from = engine.messages.length;
  const sent = Date.now();
  engine.raw(`Content-Length: ${size}\r\n\r\n`);
  engine.proc.stdin.write(body);
  const [refusal] = await engine.until('the refusal', () => {
    const e = nullIdErrors(from);
    return e.length ? e : undefined;
  });
  const refusedIn = Date.now() - sent;
  assert.equal(refusal!.error!.code, -32700);
  assert.match(refusal!.error!.message, /a frame of 104857600 bytes, more than the 67108864 this engine reads/);
  await stillAnswers('a 100 MB request');
  const took = Date.now() - sent;
  assert.equal(nullIdErrors(from).length, 1, `one error frame, not one per chunk: ${nullIdErrors(from).length}`);
  assert.equal(
    engine.messages.find((m) => m.id === 77),
    undefined,
    'the refused request is not answered as if read',
  );
  // Guards against a stream read to its end before the refusal, not speed figures (one error frame is the check).
  assert.ok(refusedIn < 30_000, `refused when its header came (${refusedIn} ms)`);
  assert.ok(took < 60_000, `the body skipped, the next request answered, in ${took} ms`);
});

test('params sent as an array are described as an array, answered with the request id', async () => {
  const reply = await engine.request('run/open', ['/tmp/no-such-run']);
  assert.equal(reply.error?.code, -32602);
  assert.equal(reply.error?.message, 'run/open params must be sent by name (an object), not by position (an array)');
  const two = await engine.request('run/open', ['/tmp/a', '/tmp/b']);
  assert.equal(two.error?.message, 'run/open params must be sent by name (an object), not by position (an array)');
  // A notification with array params gets no reply (JSON-RPC answers no notification); the next request does.
  const from = engine.messages.length;
  engine.frame(JSON.stringify({ jsonrpc: '2.0', method: 'train/stop', params: [1] }));
  await stillAnswers('params as an array');
  assert.deepEqual(
    engine.messages.slice(from).filter((m) => m.error),
    [],
    'no error answers the notification',
  );
});
