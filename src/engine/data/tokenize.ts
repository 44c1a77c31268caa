// Pre-tokenization shared by BPE and the corpus length filter: split on whitespace, then split
// punctuation from words (Moses-style, simplified). A word is a run of letters, digits and combining
// marks, which may contain single inner apostrophes, hyphens or periods ("don't", "well-known",
// "3.14", "z.B"); every other non-space character is a token of its own.
// detokenize() undoes the spacing heuristically (no space before closing punctuation, none after
// opening brackets, straight double quotes alternate open/close, “ closes a German „ and opens otherwise); it is exact for text written with
// the usual English/German spacing and approximate otherwise.

const TOKEN_RE = /[\p{L}\p{N}\p{M}]+(?:['’\-.][\p{L}\p{N}\p{M}]+)*|[^\s\p{L}\p{N}\p{M}]/gu;

export function pretokenize(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

const NO_SPACE_BEFORE = new Set(['.', ',', ';', ':', '!', '?', '%', ')', ']', '}', '…', '»', '”', '’']);
const NO_SPACE_AFTER = new Set(['(', '[', '{', '¿', '¡', '«', '„', '‘']);

export function detokenize(tokens: readonly string[]): string {
  let out = '';
  let glueNext = true; // nothing before the first token
  let quoteOpen = false; // straight " seen an odd number of times
  let lowQuoteOpen = false; // German „ waiting for its closing “
  for (const tok of tokens) {
    let glue = glueNext || NO_SPACE_BEFORE.has(tok);
    glueNext = NO_SPACE_AFTER.has(tok);
    if (tok === '"') {
      if (quoteOpen) glue = true;
      else glueNext = true;
      quoteOpen = !quoteOpen;
    } else if (tok === '„') {
      lowQuoteOpen = true;
    } else if (tok === '“') {
      if (lowQuoteOpen) glue = true; // German closing quote
      else glueNext = true; // English opening quote
      lowQuoteOpen = false;
    }
    out += glue ? tok : ' ' + tok;
  }
  return out;
}
