/**
 * Head ablation at inference (issue 13), as the CLI's `--ablate` and the attention view's toggles
 * ask for it: which heads, and what replaces their output before W^O.
 */
import { parseHeadId } from './attention';
import { type Check, arrayOf, object, oneOf } from './check';

export const ABLATION_MODES = ['zero', 'mean'] as const;
/** zero: ξ_h = 0, the head's output is removed; mean: it is replaced by its mean over the probe batch. */
export type AblationMode = (typeof ABLATION_MODES)[number];

export interface Ablation {
  /** `kind:layer.head` ids. */
  heads: string[];
  mode: AblationMode;
}

const isHeadId: Check = (v, path) =>
  typeof v === 'string' && parseHeadId(v)
    ? undefined
    : `${path} must be a head id like cross:0.3 (kind:layer.head), got ${JSON.stringify(v)}`;

export const checkAblation: Check = object({ heads: arrayOf(isHeadId), mode: oneOf(ABLATION_MODES) });

/** `--ablate cross:0.1,encoder_self:2.0` → head ids, each checked; throws naming the bad one. */
export function parseAblateList(text: string): string[] {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!ids.length) throw new RangeError('--ablate needs at least one head, e.g. cross:0.1 (kind:layer.head)');
  for (const id of ids)
    if (!parseHeadId(id))
      throw new RangeError(`--ablate: ${JSON.stringify(id)} is not a head id like cross:0.1 (kind:layer.head)`);
  return ids;
}

/** `cross:0.1 (mean)`: an ablation as a person reads it in headers and file names. */
export function describeAblation(a: Ablation): string {
  return a.heads.length ? `${a.heads.join(', ')} ${a.mode}-ablated` : 'no heads ablated';
}
