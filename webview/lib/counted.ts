/** `1 token`, `5 tokens`, `1 query`, `2 queries`: a count with its noun, plural unless the count is 1. */
export const counted = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`;
