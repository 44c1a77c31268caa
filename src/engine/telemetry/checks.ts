/**
 * Health checks that watch a run as it trains (docs/TELEMETRY.md gives each rule and threshold):
 * a non-finite loss or gradient, a loss spike, attention entropy collapsing (Zhai et al. 2023: it
 * comes before divergence), dead heads, divergence itself (divergence.ts); the mask and padding leaks are probes of the model
 * (probes.ts). Each finding is a warning or, by the run's settings, a breakpoint that pauses
 * training with a checkpoint.
 */
import type { NonFiniteSite } from './nonfinite';
import { DivergenceWatch } from './divergence';
import { ROLE_RULES } from '../../protocol/roles';
import type { Finding, TelemetryRow } from '../../protocol/telemetry';

/**
 * The thresholds, stated once, and set against a measured healthy run (docs/TELEMETRY.md): the
 * README's reverse-task run (tiny, 1,500 steps, telemetry every 25) has single-step loss spikes up to
 * 17× the running median once the loss is small, heads whose normalised entropy ends at 0.027 (a
 * sharp alignment head is healthy), and at worst a fall to 29% of a head's entropy within 5 rows.
 */
export const THRESHOLDS = {
  /** Loss above this many times the median of the last `spikeWindow` losses. */
  spikeFactor: 25,
  spikeWindow: 100,
  /** Steps before the spike check starts (the first losses fall fast). */
  spikeWarmup: 50,
  /** A head's normalised entropy below this (a sink head aside): it looks at one key whatever the query… */
  collapseFloor: 0.005,
  /** …or fallen by at least this share since the window's highest, over `collapseWindow` telemetry rows, */
  collapseDrop: 0.9,
  collapseWindow: 5,
  /**
   * …while the training loss fell by less than this share over those rows. A head that sharpens
   * fast while the loss falls is specialising (seen at step 350 of the README's gettext `small`
   * run, loss 5.6 → 5.0); Zhai et al.'s collapse comes with a loss that stalls or rises.
   */
  collapseLossFall: 0.05,
  /** Gradient and output norms of a head below this share of the layer's median, for `deadRows` rows. */
  deadShare: 1e-3,
  deadRows: 3,
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The checks that read the step's loss and the telemetry rows; it remembers what each needs. */
export class HealthMonitor {
  private readonly losses: number[] = [];
  private readonly rows: TelemetryRow[] = [];
  /** The median training loss since the previous telemetry row, one per row of `rows` (NaN: none seen). */
  private readonly rowLosses: number[] = [];
  private sinceRow: number[] = [];
  /** Heads reported as collapsed, until their entropy recovers: one finding per episode, not one per row. */
  private readonly collapsedHeads = new Set<string>();
  private readonly deadHeads = new Set<string>();
  private readonly divergence = new DivergenceWatch();

  /**
   * A training step's loss and gradient norm; on a non-finite step, `site` is where it first went
   * wrong (telemetry/nonfinite.ts).
   */
  onStep(step: number, loss: number, gradNorm: number, site?: NonFiniteSite): Finding[] {
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
      const what = !Number.isFinite(loss) ? `the loss is ${loss}` : `the gradient norm is ${gradNorm}`;
      const first = site ? `, first in this head's ${site.where}` : '';
      return [
        {
          step,
          check: 'nonfinite',
          ...(site ? { head: site.head } : {}),
          message: `${what}${first}: the update was not applied. Lower the learning rate (--lr-factor) or clip gradients (--clip-norm).`,
          value: Number.isFinite(loss) ? gradNorm : loss,
        },
      ];
    }
    const out: Finding[] = [];
    const recent = this.losses.slice(-THRESHOLDS.spikeWindow);
    if (this.losses.length >= THRESHOLDS.spikeWarmup) {
      const m = median(recent);
      if (loss > THRESHOLDS.spikeFactor * m)
        out.push({
          step,
          check: 'loss_spike',
          message: `loss ${loss.toFixed(4)} is ${(loss / m).toFixed(1)}× the median of the last ${recent.length} steps (${m.toFixed(4)})`,
          value: loss,
        });
    }
    this.losses.push(loss);
    if (this.losses.length > THRESHOLDS.spikeWindow) this.losses.shift();
    this.sinceRow.push(loss);
    out.push(...this.divergence.onLoss(step, loss));
    return out;
  }

  /** An evaluation's validation loss: the divergence check's second rule. */
  onValidation(step: number, valLoss: number): Finding[] {
    return this.divergence.onValidation(step, valLoss);
  }

  /** A telemetry row: entropy collapse and dead heads. */
  onTelemetry(row: TelemetryRow): Finding[] {
    this.rows.push(row);
    this.rowLosses.push(this.sinceRow.length ? median(this.sinceRow) : NaN);
    this.sinceRow = [];
    if (this.rows.length > Math.max(THRESHOLDS.collapseWindow, THRESHOLDS.deadRows)) {
      this.rows.shift();
      this.rowLosses.shift();
    }
    return [...this.collapsed(row), ...this.dead(row)];
  }

  /** Whether the loss fell by at least collapseLossFall over the last `n` rows (false when unknown). */
  private lossFell(n: number): boolean {
    const losses = this.rowLosses.slice(-n);
    const first = losses[0]!;
    const last = losses[losses.length - 1]!;
    return losses.length > 1 && last <= (1 - THRESHOLDS.collapseLossFall) * first;
  }

  private collapsed(row: TelemetryRow): Finding[] {
    const out: Finding[] = [];
    const norm = row.stats.entropy_norm;
    if (!norm) return out;
    const window = this.rows.slice(-THRESHOLDS.collapseWindow);
    row.heads.forEach((head, i) => {
      const now = norm[i];
      if (now === null || now === undefined) return;
      const past = window.map((r) => r.stats.entropy_norm?.[i]).filter((v): v is number => typeof v === 'number');
      const high = Math.max(...past);
      // A sink (most weight on the first key or on EOS; Xiao et al., Clark et al.) is sharp by nature.
      const sink = ['sink_first', 'sink_eos'].some((k) => (row.stats[k]?.[i] ?? 0) >= ROLE_RULES.sink);
      const why =
        now < THRESHOLDS.collapseFloor && !sink
          ? `its normalised entropy is ${now.toFixed(4)}, below ${THRESHOLDS.collapseFloor}`
          : high > 0 && now <= (1 - THRESHOLDS.collapseDrop) * high && !this.lossFell(window.length)
            ? `its normalised entropy fell from ${high.toFixed(3)} to ${now.toFixed(3)} within ${past.length} telemetry rows, while the loss did not fall`
            : undefined;
      if (!why) {
        if (now >= THRESHOLDS.collapseFloor) this.collapsedHeads.delete(head);
        return;
      }
      if (this.collapsedHeads.has(head)) return; // one finding per episode, not one per row
      this.collapsedHeads.add(head);
      out.push({ step: row.step, check: 'entropy_collapse', head, message: why, value: now });
    });
    return out;
  }

  private dead(row: TelemetryRow): Finding[] {
    const grad = row.stats.grad_norm;
    const output = row.stats.output_norm;
    if (!grad || !output || this.rows.length < THRESHOLDS.deadRows) return [];
    const recent = this.rows.slice(-THRESHOLDS.deadRows);
    const out: Finding[] = [];
    row.heads.forEach((head, i) => {
      const layer = head.slice(0, head.lastIndexOf('.'));
      const peers = row.heads.map((h, j) => (h.startsWith(`${layer}.`) ? j : -1)).filter((j) => j >= 0);
      const isDead = recent.every((r) => {
        const g = r.stats.grad_norm;
        const o = r.stats.output_norm;
        if (!g || !o) return false;
        const gm = median(peers.map((j) => g[j] ?? 0));
        const om = median(peers.map((j) => o[j] ?? 0));
        return (g[i] ?? 0) <= THRESHOLDS.deadShare * gm && (o[i] ?? 0) <= THRESHOLDS.deadShare * om;
      });
      if (!isDead) this.deadHeads.delete(head);
      if (isDead && !this.deadHeads.has(head)) {
        this.deadHeads.add(head);
        out.push({
          step: row.step,
          check: 'dead_head',
          head,
          message: `its gradient and output norms stayed below ${THRESHOLDS.deadShare} of its layer's median for ${THRESHOLDS.deadRows} telemetry rows`,
          value: grad[i] ?? 0,
        });
      }
    });
    return out;
  }
}
