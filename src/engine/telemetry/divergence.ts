/**
 * The divergence check (docs/TELEMETRY.md): the training loss far above its early level, held over
 * a window of steps (one spike is loss_spike's), or the validation loss rising at several
 * evaluations in a row. It fires once per run: a run it fires on ends `diverged` (status.json).
 */
import type { Finding } from '../../protocol/telemetry';

export const DIVERGENCE = {
  /**
   * The early level: the lowest loss of the first this-many steps (about the untrained model's, ln V;
   * the lowest, since at a factor of 1000 the loss is in the thousands by step 5).
   */
  earlySteps: 10,
  /** The recent level: the median loss of the last this-many steps. */
  window: 20,
  /** Diverged when the recent level is above this many times the early level. */
  lossFactor: 2,
  /** Diverged when the validation loss rose at this many evaluations in a row… */
  valRises: 3,
  /**
   * …by at least this share of the run's first validation loss, in all (near convergence the loss is
   * small and its noise a large share of it: 0.016 → 0.024 on the README's healthy reverse run).
   */
  valRiseShare: 0.1,
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const ADVICE = 'Lower the learning rate (--lr-factor) or clip gradients (--clip-norm).';

/** Watches the finite training losses and the validation losses of one run. */
export class DivergenceWatch {
  private readonly early: number[] = [];
  private readonly recent: number[] = [];
  /** The validation losses of the current run of rises, the one they rose from first. */
  private readonly vals: number[] = [];
  private firstVal: number | undefined;
  private fired = false;

  /** A finite training loss of step `step`. */
  onLoss(step: number, loss: number): Finding[] {
    if (this.early.length < DIVERGENCE.earlySteps) this.early.push(loss);
    this.recent.push(loss);
    if (this.recent.length > DIVERGENCE.window) this.recent.shift();
    if (this.fired || this.early.length < DIVERGENCE.earlySteps || this.recent.length < DIVERGENCE.window) return [];
    const early = Math.min(...this.early);
    const now = median(this.recent);
    if (!(now > DIVERGENCE.lossFactor * early)) return [];
    this.fired = true;
    const from = `${DIVERGENCE.earlySteps} steps`;
    return [
      {
        step,
        check: 'divergence',
        message:
          `the loss diverged: its median over the last ${DIVERGENCE.window} steps (${now.toFixed(3)}) is ` +
          `${(now / early).toFixed(1)}× its early level (${early.toFixed(3)}, the lowest of the first ${from}). ` +
          ADVICE,
        value: now,
      },
    ];
  }

  /** The validation loss of an evaluation at step `step`. */
  onValidation(step: number, valLoss: number): Finding[] {
    if (!Number.isFinite(valLoss)) return [];
    this.firstVal ??= valLoss;
    if (this.vals.length && valLoss > this.vals[this.vals.length - 1]!) this.vals.push(valLoss);
    else this.vals.splice(0, this.vals.length, valLoss); // a fall (or none yet) starts the count again
    const rises = this.vals.length - 1;
    const from = this.vals[0]!;
    if (this.fired || rises < DIVERGENCE.valRises || valLoss - from < DIVERGENCE.valRiseShare * this.firstVal)
      return [];
    this.fired = true;
    return [
      {
        step,
        check: 'divergence',
        message:
          `the validation loss diverged: it rose at ${rises} evaluations in a row, from ` +
          `${from.toFixed(3)} to ${valLoss.toFixed(3)}. ${ADVICE}`,
        value: valLoss,
      },
    ];
  }
}
