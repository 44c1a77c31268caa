/**
 * The one way a run's trainer is made, for the CLI's `train` and the server's train/start and
 * train/resume: a model initialised from the run's seed, validation BLEU when the data is text,
 * and, when resuming, the newest checkpoint restored. Only then does the run folder change: a new
 * run's folder is created, a resume's settings are recorded (OpenRun.commit), so a trainer that
 * cannot be made or resumed leaves the folder as it was.
 *
 * The trainer holds the run's lock (run/lock.ts) from before it reads the checkpoint it resumes
 * until it is disposed: a second writer of the folder is refused. A new run's folder is locked as
 * soon as it appears.
 */
import type { OpenRun } from '../run/setup';
import { takeRunLock } from '../run/lock';
import { Transformer } from '../model/transformer';
import { bleuEvaluator } from './evaluate';
import { Trainer } from './trainer';

/** The command a lock names when none is given: this process's arguments (`train --out r --resume`). */
const thisCommand = (): string => process.argv.slice(2).join(' ') || 'attention-debugger';

export function startTrainer(
  opened: OpenRun,
  opts: { resume: boolean; command?: string },
): { trainer: Trainer; from: number; warnings: string[] } {
  const { run, config, settings, data } = opened;
  if (opts.resume) run.checkWritable(); // every file a resume writes is checked before its first write
  const command = opts.command ?? thisCommand();
  let lock = opts.resume ? takeRunLock(run.path, command) : undefined;
  let trainer: Trainer | undefined;
  try {
    const model = new Transformer(config, undefined, settings.seed);
    trainer = new Trainer(run, model, settings, data, bleuEvaluator(data, settings));
    const from = opts.resume ? trainer.resume() : 0;
    opened.commit?.();
    lock ??= takeRunLock(run.path, command);
    trainer.lock = lock;
    return { trainer, from, warnings: [...(lock.tookOver ? [lock.tookOver] : []), ...trainer.warnings] };
  } catch (err) {
    lock?.release();
    trainer?.dispose();
    throw err;
  }
}
