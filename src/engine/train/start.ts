/**
 * The one way a run's trainer is made, for the CLI's `train` and the server's train/start and
 * train/resume: a model initialised from the run's seed, validation BLEU when the data is text,
 * and, when resuming, the newest checkpoint restored. Only then does the run folder change: a new
 * run's folder is created, a resume's settings are recorded (OpenRun.commit), so a trainer that
 * cannot be made or resumed leaves the folder as it was.
 */
import type { OpenRun } from '../run/setup';
import { Transformer } from '../model/transformer';
import { bleuEvaluator } from './evaluate';
import { Trainer } from './trainer';

export function startTrainer(
  opened: OpenRun,
  opts: { resume: boolean },
): { trainer: Trainer; from: number; warnings: string[] } {
  const { run, config, settings, data } = opened;
  if (opts.resume) run.checkWritable(); // every file a resume writes is checked before its first write
  const model = new Transformer(config, undefined, settings.seed);
  const trainer = new Trainer(run, model, settings, data, bleuEvaluator(data, settings));
  try {
    const from = opts.resume ? trainer.resume() : 0;
    opened.commit?.();
    return { trainer, from, warnings: [...trainer.warnings] };
  } catch (err) {
    trainer.dispose();
    throw err;
  }
}
