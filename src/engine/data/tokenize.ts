// Pre-tokenization shared by BPE and the corpus length filter: split on whitespace, then split
// punctuation from words. A word is a run of letters, digits and combining marks, which may contain
// single inner apostrophes, hyphens or periods ("don't", "well-known", "3.14", "z.B"); every other
// non-space character is a token of its own.
//
// So that decoding is exact, a split that was not at whitespace is marked with the joiner "￭"
// (U+FFED, as OpenNMT Tokenizer's joiner_annotate): on the punctuation side, as a prefix when the
// punctuation attaches to the token before it, as a suffix when the word after it attaches to it.
//   "Hello, world!" -> Hello ￭, world ￭!        "»%s«" -> » ￭%￭ s ￭«
// detokenize() joins with spaces and removes each joiner with the spaces around it, which restores
// the text exactly up to whitespace runs (these become one space). "￭" in input text is reserved.

export const JOINER = '\uffed';

const TOKEN_RE = /[\p{L}\p{N}\p{M}]+(?:['’\-.][\p{L}\p{N}\p{M}]+)*|[^\s\p{L}\p{N}\p{M}]/gu;
const WORD_START = /^[\p{L}\p{N}\p{M}]/u;
const JOINER_RE = / ?\uffed ?/gu;

export function pretokenize(text: string): string[] {
  const out: string[] = [];
  let prevEnd = -1;
  for (const m of text.matchAll(TOKEN_RE)) {
    let tok = m[0];
    if (m.index === prevEnd) {
      if (!WORD_START.test(tok)) tok = JOINER + tok;
      else out[out.length - 1] += JOINER; // a word glued after punctuation
    }
    out.push(tok);
    prevEnd = m.index + m[0].length;
  }
  return out;
}

/** Text of pre-tokens: joined by spaces, joiners (and the spaces next to them) removed. */
export function detokenize(tokens: readonly string[]): string {
  return tokens.join(' ').replace(JOINER_RE, '');
}

/** Pre-tokens without joiner marks, e.g. for tokenized BLEU or display. */
export function stripJoiners(tokens: readonly string[]): string[] {
  return tokens.map((t) => t.replaceAll(JOINER, '')).filter((t) => t !== '');
}
