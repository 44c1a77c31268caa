/** The engine's public API: `require('attention-debugger/engine')`. */
export { availableBackends, BACKENDS, currentBackend, initBackend, type BackendName } from './backend';
export { configFromPreset, PRESETS, validateConfig, ConfigError, type TransformerConfig } from './model/config';
export { Transformer } from './model/transformer';
export { scaledDotProductAttention, multiHeadAttention, paddingMask, causalMask } from './model/attention';
export { sinusoidalTable } from './model/embedding';
export { loadCheckpoint, saveCheckpoint, readConfig, listCheckpoints } from './checkpoint';
export { readSafetensors, writeSafetensors } from './checkpoint/safetensors';
export { attentionOfPairs, type PairAttention } from './inspect/attentionOfPairs';
