/**
 * What the model made of a source when no target was given (attention/get, heads/scores): kept
 * apart from inspection.ts, which holds the wire's base64 payloads, so the pages can check a
 * heads/scores reply without importing wire.ts.
 */
import { type Check, arrayOf, isFiniteNumber, isString, object } from './check';

/** What the model made of a source when no target was given. */
export interface Decoded {
  text: string;
  tokens: string[];
  /** log P(Y | X) / lp(|Y|), the GNMT length penalty with α 0.6. */
  score: number;
  logProb: number;
}
export const checkDecoded: Check<Decoded> = object<Decoded>({
  text: isString,
  tokens: arrayOf(isString),
  score: isFiniteNumber,
  logProb: isFiniteNumber,
});
