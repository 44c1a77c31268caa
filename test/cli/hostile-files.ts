/**
 * Hostile files and output targets (issue 27, items 1, 2, 5, 9): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import type { MalformedCase } from './malformed-plants';

export const HOSTILE_FILES: MalformedCase[] = [];
