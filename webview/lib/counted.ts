/** A count in digits grouped by thousands: `3,599` (the Global Q/K header said "3599 queries"). */
export const grouped = (n: number): string => n.toLocaleString('en-US');

/** `1 token`, `5 tokens`, `1 query`, `3,599 queries`: a count with its noun, plural unless the count is 1. */
export const counted = (n: number, noun: string, plural = `${noun}s`): string =>
  `${grouped(n)} ${n === 1 ? noun : plural}`;
