/**
 * The probe history a run's views step through: snapshots of the probe pair, oldest first, one per
 * step, at most MAX_SNAPSHOTS. The extension's store and the head inspector's page keep it alike,
 * so a live snapshot crosses into the page alone (the `snapshots` message), not with the history.
 * Pure and generic over what a snapshot is (an Attention: anything with its `source.step`).
 */

export const MAX_SNAPSHOTS = 128;

/** What the history needs of a snapshot: its step. */
interface Snapshot {
  source: { step: number };
}

/**
 * `history` with `items` merged in by step (an item replaces the one of its step). Past
 * MAX_SNAPSHOTS every other one of the older half goes, so a long run keeps its whole span (first
 * and newest always stay).
 */
export function mergeSnapshots<S extends Snapshot>(history: readonly S[], items: readonly S[]): S[] {
  const byStep = new Map(history.map((s) => [s.source.step, s]));
  for (const s of items) byStep.set(s.source.step, s);
  let all = [...byStep.values()].sort((a, b) => a.source.step - b.source.step);
  while (all.length > MAX_SNAPSHOTS) {
    const half = all.length >> 1;
    all = [...all.slice(0, half).filter((_, i) => i % 2 === 0), ...all.slice(half)];
  }
  return all;
}
