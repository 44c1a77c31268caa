/**
 * One writer per run folder (issue 27, item 3): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import type { MalformedCase } from './malformed-plants';

export const ONE_WRITER: MalformedCase[] = [];
