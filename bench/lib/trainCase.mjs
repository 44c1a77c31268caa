// The training cases the benches share (train-throughput.mjs, gpu/dispatches.mjs): named model shapes
// and a fixed batch.

/**
 * A name → [preset, config overrides, batch shape (when absent: the bench's --batch x --len)].
 * issue = d_model 256, 4 heads, 2+2 layers, d_ff 1024 (the small preset with 2+2 layers);
 * base-25k = the paper's base model on a batch of ~25k target tokens (400 x 64), as it trained.
 */
export const TRAIN_SHAPES = {
  tiny: ['tiny', {}],
  small: ['small', {}],
  issue: ['small', { encoder_layers: 2, decoder_layers: 2 }],
  base: ['base', {}],
  big: ['big', {}],
  'base-25k': ['base', {}, { batch: 400, len: 64 }],
};

/** A fixed batch of full-length rows (no padding): ids in [3, V) from a small LCG; BOS 1, EOS 2. */
export function makeBatch(c, rows, len, seed = 1) {
  let x = seed >>> 0;
  const next = () => 3 + ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % (c.tgt_vocab - 3));
  const src = [];
  const tgtIn = [];
  const tgtOut = [];
  for (let b = 0; b < rows; b++) {
    src.push([...Array.from({ length: len - 1 }, next), c.eos_id]);
    const t = Array.from({ length: len - 1 }, next);
    tgtIn.push([c.bos_id, ...t]);
    tgtOut.push([...t, c.eos_id]);
  }
  return { src, tgtIn, tgtOut };
}
