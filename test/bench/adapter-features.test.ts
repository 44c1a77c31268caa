/**
 * bench/gpu/adapterFeatures.mjs: the GPU kit's log names each subgroup matrix configuration's tile
 * shape and component types. Dawn's configurations keep their fields as getters on the prototype,
 * as the class below does, where JSON.stringify gives `{}` (the first H200 log). Texts by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
// @ts-expect-error: a plain ES module of the benches, without types
import { describeFeatures, describeMatrixConfig } from '../../bench/gpu/adapterFeatures.mjs';

/** Like a native GPUSubgroupMatrixConfig: nothing of its own, getters on the prototype. */
class NativeConfig {
  readonly #f: [number, number, number, string, string];
  constructor(...f: [number, number, number, string, string]) {
    this.#f = f;
  }
  get M() {
    return this.#f[0];
  }
  get N() {
    return this.#f[1];
  }
  get K() {
    return this.#f[2];
  }
  get componentType() {
    return this.#f[3];
  }
  get resultComponentType() {
    return this.#f[4];
  }
}

test('a native configuration is read by its fields, where JSON.stringify saw nothing', () => {
  const c = new NativeConfig(8, 8, 8, 'f32', 'f32');
  assert.equal(JSON.stringify(c), '{}');
  assert.equal(describeMatrixConfig(c), 'M 8 N 8 K 8, f32 → f32');
  assert.equal(
    describeMatrixConfig({ M: 16, N: 8, K: 16, componentType: 'f16', resultComponentType: 'f32', S: 2 }),
    'M 16 N 8 K 16, f16 → f32; other fields: S 2',
  );
});

test('an adapter: its features, one line a configuration, and its limits', () => {
  const adapter = {
    features: new Set(['subgroups', 'chromium-experimental-subgroup-matrix']),
    info: {
      subgroupMatrixConfigs: [new NativeConfig(8, 8, 8, 'f32', 'f32'), new NativeConfig(16, 8, 16, 'f16', 'f16')],
    },
    limits: { maxStorageBufferBindingSize: 134217728, maxBufferSize: 268435456, maxComputeWorkgroupStorageSize: 32768 },
  };
  assert.deepEqual(describeFeatures(adapter), [
    'features: shader-f16 no, subgroups yes, timestamp-query no, chromium-experimental-subgroup-matrix yes',
    'subgroup matrix configs: 2',
    '  0: M 8 N 8 K 8, f32 → f32',
    '  1: M 16 N 8 K 16, f16 → f16',
    'limits: maxStorageBufferBindingSize 134217728, maxBufferSize 268435456, maxComputeWorkgroupStorageSize 32768',
  ]);
  assert.equal(describeFeatures({ ...adapter, info: {} })[1], 'subgroup matrix configs: none');
});
