/** `1 token`, `5 tokens`: a count with its noun, plural unless the count is 1. */
export const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
