// What an adapter offers the kernels, in lines for the GPU kit's log (adapter.mjs). A subgroup
// matrix configuration is a native object whose fields are getters on its prototype, so
// JSON.stringify prints `{}` for each (the first H200 log did): its fields are read by name.

/** The features the kernels could use. */
export const WANTED_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];

/** The fields of a GPUSubgroupMatrixConfig (Dawn's chromium-experimental-subgroup-matrix). */
const MATRIX_FIELDS = ['M', 'N', 'K', 'componentType', 'resultComponentType'];

/** `M 8 N 8 K 8, f32 → f32`-like: a configuration's tile shape and component types, read by name. */
export function describeMatrixConfig(config) {
  const f = Object.fromEntries(MATRIX_FIELDS.map((k) => [k, config?.[k]]));
  const other = Object.keys(config ?? {}).filter((k) => !MATRIX_FIELDS.includes(k));
  const extra = other.length ? `; other fields: ${other.map((k) => `${k} ${config[k]}`).join(', ')}` : '';
  return `M ${f.M} N ${f.N} K ${f.K}, ${f.componentType} → ${f.resultComponentType}${extra}`;
}

/** The adapter's wanted features, its subgroup matrix configurations and its limits, as lines. */
export function describeFeatures(adapter) {
  const has = (f) => (adapter.features.has(f) ? 'yes' : 'no');
  const matrices = [...(adapter.info?.subgroupMatrixConfigs ?? [])];
  const limits = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize'];
  return [
    `features: ${WANTED_FEATURES.map((f) => `${f} ${has(f)}`).join(', ')}`,
    `subgroup matrix configs: ${matrices.length || 'none'}`,
    ...matrices.map((c, i) => `  ${i}: ${describeMatrixConfig(c)}`),
    `limits: ${limits.map((l) => `${l} ${adapter.limits[l]}`).join(', ')}`,
  ];
}
