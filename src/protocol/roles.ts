/**
 * Head roles, by written rules on a telemetry row (docs/TELEMETRY.md). Voita et al. (2019) call a
 * head positional when at least 90% of the time its largest weight goes to one relative position
 * (±1 from top_prev and top_next; any ±k from top_offset and its share, in self-attention);
 * the same 90% rule labels cross-attention heads that follow the monotone or the mirrored diagonal,
 * and, on a built-in task (copy, reverse, sort), those whose largest weight is on the source token the
 * task says each target token comes from (`align_err`, the share of rows where it is not, at most 10%).
 */

export const ROLES = [
  'positional -1',
  'positional +1',
  'aligned',
  'mirrored',
  'aligned (task)',
  'sink',
  'diffuse',
  'dead',
] as const;
/** Positional at an offset k ≥ 2 back or ahead: `positional -2`, `positional +3`, … */
export type PositionalRole = `positional ${'-' | '+'}${number}`;
export type Role = (typeof ROLES)[number] | PositionalRole;

/** The role of a head whose largest weight keeps to offset d (d ≠ 0). */
export function positionalRole(d: number): PositionalRole {
  return `positional ${d < 0 ? '-' : '+'}${Math.abs(d)}`;
}

/** The offset of a positional role (−2 for `positional -2`); undefined for other roles. */
export function positionalOffset(role: string): number | undefined {
  const m = /^positional ([-+])(\d+)$/.exec(role);
  return m ? (m[1] === '-' ? -1 : 1) * Number(m[2]) : undefined;
}

/** The rules' thresholds, stated once. */
export const ROLE_RULES = {
  /** Voita's rule: the largest weight on that position in at least this share of rows. */
  share: 0.9,
  /** Sink: at least this mean weight on the first key or on EOS. */
  sink: 0.5,
  /** Diffuse: normalised entropy at least this (1 is uniform). */
  diffuse: 0.9,
  /** Dead: gradient norm below this share of the median head of its layer. */
  dead: 1e-3,
} as const;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};

/** The roles of each head of a row (same order as row.heads). */
export function headRoles(row: { heads: string[]; stats: Record<string, (number | null)[]> }): Role[][] {
  const at = (stat: string, i: number): number => row.stats[stat]?.[i] ?? 0;
  return row.heads.map((head, i) => {
    const roles: Role[] = [];
    if (at('top_prev', i) >= ROLE_RULES.share) roles.push('positional -1');
    if (at('top_next', i) >= ROLE_RULES.share) roles.push('positional +1');
    const d = row.stats.top_offset?.[i];
    if (d && at('top_offset_share', i) >= ROLE_RULES.share && !roles.includes(positionalRole(d)))
      roles.push(positionalRole(d));
    if (at('top_diagonal', i) >= ROLE_RULES.share) roles.push('aligned');
    if (at('top_mirrored', i) >= ROLE_RULES.share) roles.push('mirrored');
    const alignErr = row.stats.align_err?.[i];
    if (alignErr !== undefined && alignErr !== null && 1 - alignErr >= ROLE_RULES.share) roles.push('aligned (task)');
    if (at('sink_first', i) >= ROLE_RULES.sink || at('sink_eos', i) >= ROLE_RULES.sink) roles.push('sink');
    if (at('entropy_norm', i) >= ROLE_RULES.diffuse) roles.push('diffuse');
    const grad = row.stats.grad_norm;
    if (grad) {
      const layer = head.slice(0, head.lastIndexOf('.'));
      const peers = row.heads.flatMap((h, j) => (h.startsWith(`${layer}.`) ? [grad[j] ?? 0] : []));
      if ((grad[i] ?? 0) <= ROLE_RULES.dead * median(peers)) roles.push('dead');
    }
    return roles;
  });
}
