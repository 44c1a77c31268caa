/**
 * What run/open checks before a run is shown (issue 26 item 2): the checkpoint its attention will
 * be read from (the step asked for, else a PyTorch folder's model.safetensors, else the newest
 * step-N.safetensors) must be a whole safetensors file of the config's tensors. A broken one is
 * refused here, naming the file, what is wrong and what to do, where it used to open as an empty
 * "(finished)" run and fail only at the first decode. Its values are not read (a diverged run's
 * NaN checkpoint still opens, for its metrics): check-run does that.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { listCheckpoints } from '../checkpoint';
import type { TransformerConfig } from '../model/config';
import { checkCheckpoint, type RunProblem } from './checkTensors';
import { formatProblem } from './checkFolder';
import type { RunDir } from './runDir';

/** The checkpoint the selection reads: `step`'s, or model.safetensors, or the newest; undefined when none. */
function checkpointToRead(run: RunDir, step: number | undefined): { path: string; step?: number } | undefined {
  const steps = listCheckpoints(run.path);
  // A step between checkpoints is a snapshot's: the probe's attention is read from the snapshot.
  if (step !== undefined) return existsSync(run.weightsPath(step)) ? { path: run.weightsPath(step), step } : undefined;
  const pytorch = join(run.path, 'model.safetensors');
  if (existsSync(pytorch)) return { path: pytorch };
  const newest = steps[steps.length - 1];
  return newest && { path: newest.path, step: newest.step };
}

/** What to do about a broken checkpoint: another one to open, or the file to replace. */
function advice(run: RunDir, file: string, step: number | undefined, asked: boolean): string {
  if (step === undefined)
    return `replace ${file} with the model your trainer saved (a state_dict written by safetensors' save_file)`;
  const others = listCheckpoints(run.path)
    .map((c) => c.step)
    .filter((s) => s !== step);
  if (asked)
    return others.length
      ? `pick another checkpoint (steps ${others.join(', ')}), or run check-run on the folder`
      : 'run check-run on the folder for every problem it has';
  const previous = others.filter((s) => s < step).pop();
  return previous !== undefined
    ? `move ${file} out of the folder to open the run at its previous checkpoint, step ${previous}`
    : `move ${file} out of the folder to open the run without checkpoints (its metrics only)`;
}

/** Throws, naming the file, what is wrong with it and what to do, when the checkpoint to read is broken. */
export function checkOpenedCheckpoint(run: RunDir, config: TransformerConfig, step: number | undefined): void {
  const ckpt = checkpointToRead(run, step);
  if (!ckpt) return; // no checkpoint yet: a run just started opens with its metrics
  const file = relative(run.path, ckpt.path);
  const problems: RunProblem[] = [];
  checkCheckpoint(ckpt.path, file, config, ckpt.step, problems, false);
  if (!problems.length) return;
  const shown = problems.slice(0, 3).map(formatProblem).join('; ');
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
  throw new Error(
    `${run.path}: ${shown}${more}: its attention cannot be read; ${advice(run, file, ckpt.step, step !== undefined)}`,
  );
}
