/** The attention size check, worked by hand on the paper's base shape (6 + 6 layers, 8 heads). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attentionBytes, checkAttentionSize, checkDecodeSize } from '../../src/engine/inspect/attentionSize';

const BASE = { heads: 8, encoder_layers: 6, decoder_layers: 6 };

test('bytes of all maps: 4 · heads · (L_enc·S² + L_dec·(T² + T·S))', () => {
  // 511 + 511 tokens: 4 · 8 · (6 · 511² + 6 · 2 · 511²) = 576 · 261,121 = 150,405,696.
  assert.equal(attentionBytes(BASE, 511, 511), 150_405_696);
  // 10 source, 3 target, 1 layer each, 2 heads: 4 · 2 · (100 + 9 + 30) = 1,112.
  assert.equal(attentionBytes({ heads: 2, encoder_layers: 1, decoder_layers: 1 }, 10, 3), 1112);
});

test('511 tokens pass; 599 (which once exhausted the heap) and 4,096 are refused, saying how long an input can be', () => {
  assert.doesNotThrow(() => checkAttentionSize(BASE, 511, 511));
  // 599: 576 · 358,801 = 206,669,376 bytes = 197 MB; the limit 160 MB allows n ≤ √(167,772,160 / 576) = 539.7.
  assert.throws(
    () => checkAttentionSize(BASE, 599, 599),
    new Error(
      'the attention of 599 source and 599 target tokens would take 197 MB for all maps, more than the 160 MB ' +
        'the engine computes at once: shorten the input to about 539 tokens',
    ),
  );
  assert.throws(() => checkAttentionSize(BASE, 4096, 4096), /would take 9,216 MB/);
});

test('a source to decode is refused past max_len, told the length that decodes (issue 26 item 10)', () => {
  // The model: 4 heads, 2 + 2 layers, max_len 256. 5,000 tokens were told "about 1321"
  // (√(167,772,160 / (4 · 4 · 6)) = 1,322.0), which beam search then refused past max_len.
  const demo = { heads: 4, encoder_layers: 2, decoder_layers: 2, max_len: 256, positional: 'sinusoidal' as const };
  assert.throws(
    () => checkDecodeSize(demo, 5000),
    new Error(
      "the source has 5000 tokens with </s>, more than this model's max_len of 256 positions, the longest source " +
        'it decodes: shorten it to at most 255 tokens (256 with </s>), or type a target as well: the attention ' +
        'of a given pair is read past max_len',
    ),
  );
  assert.doesNotThrow(() => checkDecodeSize(demo, 256));
  assert.throws(() => checkDecodeSize({ ...demo, positional: 'learned' }, 257), /\(256 with <\/s>\)$/);
  // Where the maps' limit is the one that refuses, its advice is capped at max_len too: a length that decodes.
  assert.throws(() => checkAttentionSize(demo, 5000, 1, 256), /shorten the input to about 256 tokens$/);
});
