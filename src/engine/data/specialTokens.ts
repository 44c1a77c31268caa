// Special token ids shared by the whole engine (embedding rows 0..3 of every vocabulary).
// PAD must stay 0: attention masks and the loss treat id 0 as "no token here".

export const PAD = 0;
export const BOS = 1;
export const EOS = 2;
export const UNK = 3;

/** Surface strings of the special ids, indexed by id. */
export const SPECIAL_TOKENS: readonly string[] = ['<pad>', '<s>', '</s>', '<unk>'];

/** Number of special ids; the first ordinary token id. */
export const NUM_SPECIAL = SPECIAL_TOKENS.length;

/** The decoder's input under teacher forcing: BOS, then the target (the output shifted right, §3.1). */
export const decoderInput = (tgt: readonly number[]): number[] => [BOS, ...tgt];
