/** `average`: a checkpoint whose every weight is the mean of the run's last n checkpoints (§6.1: 5 for base, 20 for big). */
import { join } from 'node:path';
import { listCheckpoints } from '../checkpoint';
import { readSafetensors, writeSafetensors, type NamedTensor } from '../checkpoint/safetensors';
import { parseArgs, usage, UsageError, type OptionSpec } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder' },
  last: { type: 'string', help: 'how many of the newest checkpoints (default 5)' },
  out: { type: 'string', help: 'file to write (default RUN/checkpoints/average-last-N.safetensors)' },
  help: { type: 'boolean', help: 'show this help' },
};

/** Element-wise mean of checkpoints with the same tensor names and shapes. */
export function averageCheckpoints(paths: string[]): Map<string, NamedTensor> {
  const first = readSafetensors(paths[0]).tensors;
  const sum = new Map([...first].map(([name, t]) => [name, { shape: t.shape, data: Float64Array.from(t.data) }]));
  for (const path of paths.slice(1)) {
    const tensors = readSafetensors(path).tensors;
    for (const [name, acc] of sum) {
      const t = tensors.get(name);
      if (!t || t.shape.join(',') !== acc.shape.join(',')) throw new Error(`${path}: tensor "${name}" ${t ? `has shape [${t.shape}], ${paths[0]} has [${acc.shape}]` : 'is missing'}`);
      for (let i = 0; i < t.data.length; i++) acc.data[i] += t.data[i];
    }
  }
  return new Map([...sum].map(([name, acc]) => [name, { shape: acc.shape, data: Float32Array.from(acc.data, (x) => x / paths.length) }]));
}

export async function averageCommand(argv: string[]): Promise<number> {
  const { options } = parseArgs(argv, specs, 'average');
  if (options.help) {
    process.stdout.write(usage('average', 'Averages the newest checkpoints of a run into one.', specs));
    return 0;
  }
  if (!options.run) throw new UsageError('average: --run RUN is required');
  const n = options.last === undefined ? 5 : Number(options.last);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--last: expected a whole number ≥ 1, got "${options.last}"`);
  const all = listCheckpoints(options.run as string);
  if (all.length === 0) throw new UsageError(`average: ${options.run} has no checkpoints`);
  const chosen = all.slice(-n);
  const out = (options.out as string) ?? join(options.run as string, 'checkpoints', `average-last-${chosen.length}.safetensors`);
  writeSafetensors(out, averageCheckpoints(chosen.map((c) => c.path)), { averaged_steps: chosen.map((c) => c.step).join(',') });
  process.stdout.write(`${JSON.stringify({ out, steps: chosen.map((c) => c.step) })}\n`);
  if (chosen.length < n) process.stderr.write(`average: only ${chosen.length} checkpoints in ${options.run}\n`);
  return 0;
}
