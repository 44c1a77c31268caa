/**
 * Head roles over training (docs/TELEMETRY.md, "Roles over training"): each head's role at each
 * telemetry row as segments of a swimlane, and, for a loss drop (lossPhases.ts), the heads whose
 * role changed or whose telemetry moved most across it. Pure, so unit tests run it without a browser.
 */
import { headRoles, positionalOffset, type Role } from '../../src/protocol/roles';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import type { LossPhase } from './lossPhases';

/** The role a lane shows when a head has several, first first (positional ±k, k ≥ 2, after ±1). */
export const LANE_ORDER: readonly Role[] = [
  'dead',
  'aligned (task)',
  'mirrored',
  'aligned',
  'positional -1',
  'positional +1',
  'sink',
  'diffuse',
];

/** The statistics in [0, 1] whose moves are compared across a drop. */
export const MOVED_STATS = [
  'align_err',
  'top_diagonal',
  'top_mirrored',
  'top_prev',
  'top_next',
  'top_offset_share',
  'sink_first',
  'sink_eos',
  'entropy_norm',
  'confidence',
] as const;

/** A move smaller than this is not listed unless the head's role changed. */
export const MIN_MOVE = 0.1;

/** The lane's role of a head with these roles: the first of LANE_ORDER it has, null for none. */
export function laneRole(roles: readonly Role[]): Role | null {
  return [...roles].sort((a, b) => laneRank(a) - laneRank(b))[0] ?? null;
}

/** A role's place in LANE_ORDER: positional ±k (k ≥ 2) after ±1, by |k|, back before ahead. */
export function laneRank(role: Role): number {
  const i = LANE_ORDER.indexOf(role);
  const d = positionalOffset(role);
  if (i >= 0 || d === undefined) return i >= 0 ? i : Infinity;
  return LANE_ORDER.indexOf('positional +1') + 1 - 1 / (2 * Math.abs(d) + (d > 0 ? 1 : 0));
}

export interface LaneSegment {
  /** From this row's step up to the next row's (the last row: its own step). */
  from: number;
  to: number;
  role: Role | null;
}

export interface Lane {
  head: string;
  segments: LaneSegment[];
}

const sorted = (rows: readonly TelemetryRow[]): TelemetryRow[] => [...rows].sort((a, b) => a.step - b.step);

/** One lane per head (first-seen order), rows of the same role merged into one segment. */
export function roleLanes(rows: readonly TelemetryRow[]): Lane[] {
  const rs = sorted(rows);
  const lanes = new Map<string, Lane>();
  rs.forEach((row, r) => {
    const to = rs[r + 1]?.step ?? row.step;
    headRoles(row).forEach((roles, i) => {
      const head = row.heads[i]!;
      const lane = lanes.get(head) ?? { head, segments: [] };
      lanes.set(head, lane);
      const role = laneRole(roles);
      const last = lane.segments[lane.segments.length - 1];
      if (last && last.role === role && last.to === row.step) last.to = to;
      else lane.segments.push({ from: row.step, to, role });
    });
  });
  return [...lanes.values()];
}

export interface DropHead {
  head: string;
  before: Role[];
  after: Role[];
  /** The statistic that moved most, and its values at the two rows. */
  stat: string;
  from: number | null;
  to: number | null;
}

export interface DropExplained {
  /** The telemetry rows compared: the last at or before the drop's start less a margin, the first at or after its end plus it. */
  before: number;
  after: number;
  heads: DropHead[];
}

/**
 * The heads whose role or telemetry changed across a drop: the rows compared are widened by half
 * the drop's width on each side; heads whose role changed come first, then by the largest move of a
 * MOVED_STATS statistic (at least MIN_MOVE), at most `limit`. Undefined when the rows are too few.
 */
export function explainDrop(rows: readonly TelemetryRow[], drop: LossPhase, limit = 5): DropExplained | undefined {
  const rs = sorted(rows);
  if (rs.length < 2) return undefined;
  const margin = (drop.to - drop.from) / 2;
  const a = [...rs].reverse().find((r) => r.step <= drop.from - margin) ?? rs[0]!;
  const b = rs.find((r) => r.step >= drop.to + margin) ?? rs[rs.length - 1]!;
  if (a.step >= b.step) return undefined;
  const rolesA = headRoles(a);
  const rolesB = headRoles(b);
  const found = b.heads.flatMap((head, j) => {
    const i = a.heads.indexOf(head);
    if (i < 0) return [];
    const before = rolesA[i]!;
    const after = rolesB[j]!;
    const changed = before.length !== after.length || before.some((r) => !after.includes(r));
    let best = { stat: '', from: null as number | null, to: null as number | null, move: 0 };
    for (const stat of MOVED_STATS) {
      const x = a.stats[stat]?.[i];
      const y = b.stats[stat]?.[j];
      if (typeof x === 'number' && typeof y === 'number' && Math.abs(y - x) > best.move)
        best = { stat, from: x, to: y, move: Math.abs(y - x) };
    }
    if (!changed && best.move < MIN_MOVE) return [];
    return [{ head, before, after, stat: best.stat, from: best.from, to: best.to, changed, move: best.move }];
  });
  found.sort((x, y) => Number(y.changed) - Number(x.changed) || y.move - x.move);
  return {
    before: a.step,
    after: b.step,
    heads: found.slice(0, limit).map(({ changed: _c, move: _m, ...head }) => head),
  };
}
