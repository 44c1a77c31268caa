/**
 * The copy-task runs the training tests share (training.test.ts, then restart.test.ts, in that
 * order): folders, the micro config, and what the engine wrote, read back from disk.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { microConfig } from './runs';

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-ext-'));
export const runsDir = path.join(tmp, 'runs');
export const run1 = path.join(runsDir, 'copy-micro');
export const run2 = path.join(runsDir, 'copy-micro-crash');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The micro config of the brief, with checkpoints (and snapshots) every 5 steps. */
export const copyConfig = (steps: number): string => microConfig(tmp, steps, 5);

/** Steps of the checkpoints on disk (an independent view of what the engine wrote). */
export function checkpointSteps(runDir: string): number[] {
  const dir = path.join(runDir, 'checkpoints');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((f) => /^step-(\d+)\.safetensors$/.exec(f))
    .filter((m) => m)
    .map((m) => Number(m![1]))
    .sort((a, b) => a - b);
}

export function metricsSteps(runDir: string): number[] {
  return fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
}
