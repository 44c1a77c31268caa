/**
 * The protocol's runtime validators: well-formed messages pass, and each malformed one is rejected
 * with a message that names the offending field (the expected strings are written out by hand).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineInfo, engineLog } from '../../src/protocol/methods';
import { validate } from '../../src/protocol/rpc';

const info = (v: unknown): string | undefined => validate(engineInfo.checkResult, v, engineInfo.method, 'result');
const log = (v: unknown): string | undefined => validate(engineLog.checkParams, v, engineLog.method, 'params');

test('engine/info result: well formed passes, extra fields are allowed', () => {
  assert.equal(
    info({ version: '0.1.0', backend: 'wasm', backends: ['wasm', 'cpu'], matmul: 'wasm: OpenBLAS', adapter: 'none' }),
    undefined,
  );
  assert.equal(
    info({ version: '0.1.0', backend: 'cpu', backends: [], matmul: 'cpu kernels', adapter: 'x', future: 1 }),
    undefined,
  );
  assert.equal(
    info({ version: '0.1.0', backend: 'cpu', backends: [], matmul: 'cpu kernels' }),
    'engine/info result.adapter must be a string, got undefined',
  );
  assert.equal(
    info({ version: '0.1.0', backend: 'cpu', backends: [] }),
    'engine/info result.matmul must be a string, got undefined',
  );
});

test('engine/info result: each bad field is named', () => {
  assert.equal(info(null), 'engine/info result must be an object, got null');
  assert.equal(info([]), 'engine/info result must be an object, got array');
  assert.equal(info({ backend: 'wasm', backends: [] }), 'engine/info result.version must be a string, got undefined');
  assert.equal(
    info({ version: '1', backend: 3, backends: [] }),
    'engine/info result.backend must be a string, got number',
  );
  assert.equal(
    info({ version: '1', backend: 'wasm', backends: 'wasm' }),
    'engine/info result.backends must be an array, got string',
  );
  assert.equal(
    info({ version: '1', backend: 'wasm', backends: ['wasm', null] }),
    'engine/info result.backends[1] must be a string, got null',
  );
});

test('engine/info params: none, null or {} only', () => {
  const params = (v: unknown): string | undefined => validate(engineInfo.checkParams, v, engineInfo.method, 'params');
  assert.equal(params(undefined), undefined);
  assert.equal(params(null), undefined);
  assert.equal(params({}), undefined);
  assert.equal(params({ x: 1 }), 'engine/info params must be empty, got object');
  assert.equal(params(7), 'engine/info params must be empty, got number');
});

test('engine/log params: level is one of four names', () => {
  assert.equal(log({ level: 'warn', message: 'hello' }), undefined);
  assert.equal(
    log({ level: 'fatal', message: 'x' }),
    'engine/log params.level must be one of debug, info, warn, error, got "fatal"',
  );
  assert.equal(log({ level: 'info' }), 'engine/log params.message must be a string, got undefined');
});
