/** §3.4 Embeddings (scaled by √d_model) and §3.5 positional encodings, sinusoidal or learned. */
import * as tf from '@tensorflow/tfjs-core';

/**
 * PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
 * Computed in float64 and rounded once. Returns [maxLen, d].
 */
export function sinusoidalTable(maxLen: number, d: number): Float32Array {
  const table = new Float32Array(maxLen * d);
  for (let pos = 0; pos < maxLen; pos++) {
    for (let i = 0; i < d / 2; i++) {
      const angle = pos / Math.pow(10000, (2 * i) / d);
      table[pos * d + 2 * i] = Math.sin(angle);
      table[pos * d + 2 * i + 1] = Math.cos(angle);
    }
  }
  return table;
}

/**
 * Embed(ids)·√d_model + PE[offset : offset + T]. ids: [B, T] int32, table: [V, d], positions:
 * [max_len, d] (the sinusoidal constant or the learned matrix) → [B, T, d]
 */
export function embed(table: tf.Tensor, positions: tf.Tensor, ids: tf.Tensor2D, offset = 0): tf.Tensor3D {
  const [b, t] = ids.shape;
  const d = table.shape[1]!;
  const maxLen = positions.shape[0]!;
  if (offset + t > maxLen) throw new Error(`sequence of ${offset + t} positions exceeds max_len ${maxLen}`);
  const tokens = tf.reshape(tf.gather(table, tf.reshape(ids, [-1])), [b, t, d]); // [B, T, d]
  const pe = tf.slice(positions, [offset, 0], [t, d]); // [T, d]
  return tf.add(tf.mul(tokens, Math.sqrt(d)), pe) as tf.Tensor3D; // [B, T, d]
}
