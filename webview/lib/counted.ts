/**
 * `1 token`, `5 tokens`, `1 query`, `3,599 queries`: a count with its noun, plural unless the count
 * is 1, in digits grouped by thousands (the Global Q/K header said "3599 queries, 3599 keys").
 */
export const counted = (n: number, noun: string, plural = `${noun}s`): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
