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

/**
 * Throws, saying how long an input can be, when the maps of S and T tokens would pass the limit;
 * `longest`: the most tokens another limit lets the input have (max_len when it is decoded), so the
 * advice is never a length that is then refused for another reason.
 */
export function checkAttentionSize(
  c: Parameters<typeof attentionBytes>[0],
  S: number,
  T: number,
  longest = Infinity,
): void {
  const bytes = attentionBytes(c, S, T);
  if (bytes <= ATTENTION_BYTES_LIMIT) return;
  // The longest n with attentionBytes(n, n) within the limit: shown as what to aim for.
  const perToken2 = 4 * c.heads * (c.encoder_layers + 2 * c.decoder_layers);
  const n = Math.min(longest, Math.floor(Math.sqrt(ATTENTION_BYTES_LIMIT / perToken2)));
  const mb = (b: number) => `${Math.round(b / (1 << 20)).toLocaleString('en-US')} MB`;
  throw new Error(
    `the attention of ${S} source and ${T} target tokens would take ${mb(bytes)} for all maps, more than the ` +
      `${mb(ATTENTION_BYTES_LIMIT)} the engine computes at once: shorten the input to about ${n} tokens`,
  );
}

/**
 * Throws, with the length that works, when a source of S tokens (with </s>) is longer than the
 * model decodes: beam search gives every source and target token a position, so max_len is its
 * limit (decode/translate.ts refuses past it), whatever the attention's own limits allow.
 */
export function checkDecodeSize(c: Pick<TransformerConfig, 'max_len' | 'positional'>, S: number): void {
  if (S <= c.max_len) return;
  const pair =
    c.positional === 'sinusoidal'
      ? ', or type a target as well: the attention of a given pair is read past max_len'
      : '';
  throw new Error(
    `the source has ${S} tokens with </s>, more than this model's max_len of ${c.max_len} positions, the longest ` +
      `source it decodes: shorten it to at most ${c.max_len - 1} tokens (${c.max_len} with </s>)${pair}`,
  );
}

/** What a long pass (longAttention.ts) may hold at once: 1 GB, the base shape up to about 8,000 tokens a side. */
export const LONG_PASS_BYTES_LIMIT = 1 << 30;

/**
 * Bytes a long pass holds at its peak for S source and T target tokens: the kept Q·W^Q and K·W^K
 * of every attention (encoder 2S, decoder self 2T, cross T + S rows of d_model each layer), the
 * activations (a few [n, d_model] and one [n, d_ff]), and one slice of weights with its softmax.
 */
export function longPassBytes(
  c: Pick<TransformerConfig, 'd_model' | 'd_ff' | 'encoder_layers' | 'decoder_layers'>,
  S: number,
  T: number,
): number {
  const kept = c.d_model * (2 * c.encoder_layers * S + c.decoder_layers * (3 * T + S));
  const n = Math.max(S, T);
  const activations = 8 * (S + T) * c.d_model + 2 * n * c.d_ff;
  return 4 * (kept + activations + 3 * (8 << 20));
}

/** Throws, with the numbers, when a long pass of S and T tokens would pass LONG_PASS_BYTES_LIMIT. */
export function checkLongPassSize(c: Parameters<typeof longPassBytes>[0], S: number, T: number): void {
  const bytes = longPassBytes(c, S, T);
  if (bytes <= LONG_PASS_BYTES_LIMIT) return;
  const mb = (b: number) => `${Math.round(b / (1 << 20)).toLocaleString('en-US')} MB`;
  throw new Error(
    `the layer-by-layer attention of ${S} source and ${T} target tokens would hold ${mb(bytes)}, more than the ` +
      `${mb(LONG_PASS_BYTES_LIMIT)} the engine allows: shorten the input`,
  );
}
