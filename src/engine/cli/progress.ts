/** A progress line on stderr: redrawn in place on a terminal, a line every few percent otherwise. */
import type { MetricsRow } from '../run/runDir';

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

export class Progress {
  private readonly started = Date.now();
  private readonly firstStep: number;
  private lastPrinted = -1;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly total: number,
    firstStep: number,
  ) {
    this.firstStep = firstStep;
  }

  update(row: MetricsRow): void {
    const done = row.step - this.firstStep;
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = done > 0 ? (elapsed / done) * (this.total - row.step) : NaN;
    const width = 24;
    const filled = Math.round((row.step / this.total) * width);
    const bar = `[${'='.repeat(Math.max(filled - 1, 0))}${filled ? '>' : ''}${' '.repeat(width - filled)}]`;
    const val = row.val_loss !== undefined ? ` val ${row.val_loss.toFixed(3)}` : '';
    const bleu = row.val_bleu !== undefined ? ` BLEU ${row.val_bleu.toFixed(2)}` : '';
    const line = `step ${row.step}/${this.total} ${bar} loss ${row.loss.toFixed(3)}${val}${bleu} lr ${row.lr.toExponential(2)} ${Math.round(row.tokens_per_sec ?? 0)} tok/s ETA ${duration(eta)}`;
    if (this.tty) process.stderr.write(`\r${line}\u001b[K`);
    else {
      const bucket = Math.floor((row.step / this.total) * 20);
      if (bucket !== this.lastPrinted || row.val_loss !== undefined) process.stderr.write(`${line}\n`);
      this.lastPrinted = bucket;
    }
  }

  message(text: string): void {
    process.stderr.write(`${this.tty ? '\r\u001b[K' : ''}${text}\n`);
  }

  end(): void {
    if (this.tty) process.stderr.write('\n');
  }
}
