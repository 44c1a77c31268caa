/**
 * What the attention of one pair weighs before it is computed: every map of every layer, head and
 * kind in float32. Past ATTENTION_BYTES_LIMIT the request is refused with the numbers, where it used
 * to exhaust the engine's heap (599 tokens on the base shape) or build a 200 MB reply.
 */
import type { TransformerConfig } from '../model/config';

/** 160 MB of maps: the base shape (6 + 6 layers × 8 heads) up to about 520 source and target tokens. */
export const ATTENTION_BYTES_LIMIT = 160 << 20;

/** Bytes of all maps for S source and T target tokens: encoder S², decoder T², cross T·S per head. */
export function attentionBytes(
  c: Pick<TransformerConfig, 'heads' | 'encoder_layers' | 'decoder_layers'>,
  S: number,
  T: number,
): number {
  return 4 * c.heads * (c.encoder_layers * S * S + c.decoder_layers * (T * T + T * S));
}

/** Throws, saying how long an input can be, when the maps of S and T tokens would pass the limit. */
export function checkAttentionSize(c: Parameters<typeof attentionBytes>[0], S: number, T: number): void {
  const bytes = attentionBytes(c, S, T);
  if (bytes <= ATTENTION_BYTES_LIMIT) return;
  // The longest n with attentionBytes(n, n) within the limit: shown as what to aim for.
  const perToken2 = 4 * c.heads * (c.encoder_layers + 2 * c.decoder_layers);
  const n = Math.floor(Math.sqrt(ATTENTION_BYTES_LIMIT / perToken2));
  const mb = (b: number) => `${Math.round(b / (1 << 20)).toLocaleString('en-US')} MB`;
  throw new Error(
    `the attention of ${S} source and ${T} target tokens would take ${mb(bytes)} for all maps, more than the ` +
      `${mb(ATTENTION_BYTES_LIMIT)} the engine computes at once: shorten the input to about ${n} tokens`,
  );
}
