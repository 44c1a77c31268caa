/**
 * Runs written by PyTorch and inputs that were silent (issue 27, items 6 and 7): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import type { MalformedCase } from './malformed-plants';

export const SILENT_INPUTS: MalformedCase[] = [];
