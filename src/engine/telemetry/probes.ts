/**
 * Probes of the model's masks (docs/TELEMETRY.md):
 * - mask leak: what the decoder computes at positions ≤ t must not change when the target tokens
 *   after t change (§3.2.3, "preventing leftward information flow");
 * - padding leak: no query may put weight on a padded key.
 * Each runs the model in eval mode on the probe pairs and names the first layer and head at fault.
 */
import { perKind } from '../model/context';
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, headId } from '../../protocol/attention';
import { attentionOfPairs } from '../inspect/attentionOfPairs';
import type { Transformer } from '../model/transformer';
import type { Finding } from '../../protocol/telemetry';

/** Differences below this are float round-off (float32, softmax over a few keys). */
const TOLERANCE = 1e-4;

/** The target with every token after position t replaced by another ordinary token. */
function scramble(model: Transformer, tgt: number[], t: number): number[] {
  const { pad_id, bos_id, eos_id, tgt_vocab } = model.config;
  const special = new Set([pad_id, bos_id, eos_id]);
  return tgt.map((id, j) => {
    if (j <= t) return id;
    let other = (id + 1) % tgt_vocab;
    while (special.has(other) || other === id) other = (other + 1) % tgt_vocab;
    return other;
  });
}

/** Finds the first head whose rows 0…t differ between two [L, H, Q, K] maps, and by how much. */
function firstDifference(
  a: Float32Array,
  b: Float32Array,
  shape: readonly number[],
  rows: number,
): { layer: number; head: number; diff: number } | undefined {
  const [L, H, Q, K] = shape;
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++) {
      let diff = 0;
      for (let q = 0; q < Math.min(rows, Q); q++)
        for (let k = 0; k < K; k++) {
          const i = ((l * H + h) * Q + q) * K + k;
          diff = Math.max(diff, Math.abs(a[i] - b[i]));
        }
      if (diff > TOLERANCE) return { layer: l, head: h, diff };
    }
  return undefined;
}

/** A mask leak on one pair (src ends with EOS, tgt starts with BOS), or none. */
export async function maskLeak(model: Transformer, step: number, src: number[], tgt: number[]): Promise<Finding[]> {
  if (tgt.length < 3) return [];
  const t = Math.floor((tgt.length - 1) / 2);
  // Two passes of one pair each: the same shapes take the same arithmetic, so a correct mask gives
  // bit-equal prefixes (in one batch, rows may round differently, and a saturated model amplifies it).
  const [a] = await attentionOfPairs(model, [src], [tgt]);
  const [b] = await attentionOfPairs(model, [src], [scramble(model, tgt, t)]);
  for (const kind of ['decoder_self', 'cross'] as const) {
    const ma = a!.maps.find((m) => m.kind === kind)!;
    const mb = b!.maps.find((m) => m.kind === kind)!;
    const d = firstDifference(ma.weights, mb.weights, ma.shape, t + 1);
    if (d) {
      const head = headId({ kind, layer: d.layer, head: d.head });
      return [
        {
          step,
          check: 'mask_leak',
          head,
          value: d.diff,
          message: `its weights at positions ≤ ${t} changed by ${d.diff.toExponential(2)} when only the target tokens after ${t} changed: a position sees the future (the causal mask leaks)`,
        },
      ];
    }
  }
  return [];
}

/** Weight on padded keys, in a batch of pairs padded to the longest (kept unpadded: the engine's model.forward). */
export async function paddingLeak(
  model: Transformer,
  step: number,
  src: number[][],
  tgt: number[][],
): Promise<Finding[]> {
  const c = model.config;
  const S = Math.max(...src.map((r) => r.length));
  const T = Math.max(...tgt.map((r) => r.length));
  const pad = (rows: number[][], n: number) => rows.map((r) => [...r, ...Array(n - r.length).fill(c.pad_id)]);
  const record = perKind<tf.Tensor4D>();
  tf.tidy(() => {
    model.forward(tf.tensor2d(pad(src, S), undefined, 'int32'), tf.tensor2d(pad(tgt, T), undefined, 'int32'), {
      training: false,
      record,
    });
  });
  try {
    for (const kind of ATTENTION_KINDS) {
      for (const [layer, w] of record[kind].entries()) {
        const [B, H, Q, K] = w.shape;
        const data = (await w.data()) as Float32Array;
        for (let b = 0; b < B; b++) {
          const keys = kind === 'decoder_self' ? tgt[b]!.length : src[b]!.length;
          const queries = kind === 'encoder_self' ? src[b]!.length : tgt[b]!.length;
          for (let h = 0; h < H; h++)
            for (let q = 0; q < queries; q++)
              for (let k = keys; k < K; k++) {
                const v = data[((b * H + h) * Q + q) * K + k];
                if (Math.abs(v) > TOLERANCE) {
                  const head = headId({ kind, layer, head: h });
                  return [
                    {
                      step,
                      check: 'padding_leak',
                      head,
                      value: v,
                      message: `query ${q} of pair ${b} puts ${v.toFixed(4)} of its weight on padded key ${k} (padding must be masked)`,
                    },
                  ];
                }
              }
        }
      }
    }
    return [];
  } finally {
    for (const k of ATTENTION_KINDS) tf.dispose(record[k]);
  }
}
