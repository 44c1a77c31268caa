/** A small, strict command-line parser: `--name value`, `--name=value`, boolean `--flag`. */
import { EARLY_STOPS, type EarlyStop } from '../../protocol/beamTree';
import { BEAM_LIMIT, overLimit } from '../run/limits';

export interface OptionSpec {
  /** 'string' takes a value; 'boolean' is a flag. */
  type: 'string' | 'boolean';
  help: string;
}
export type Parsed = { options: Record<string, string | boolean | undefined>; positional: string[] };

export class UsageError extends Error {}

export function parseArgs(argv: string[], specs: Record<string, OptionSpec>, command: string): Parsed {
  const options: Record<string, string | boolean | undefined> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw new UsageError(`${command}: unknown option --${name} (see --help)`);
    if (spec.type === 'boolean') {
      if (eq >= 0) throw new UsageError(`${command}: --${name} takes no value`);
      options[name] = true;
    } else {
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || (eq < 0 && value.startsWith('--')))
        throw new UsageError(`${command}: --${name} needs a value`);
      options[name] = value;
    }
  }
  return { options, positional };
}

/** "5,6,7" → [5, 6, 7], with an error that names the option. */
export function parseIds(value: string, option: string): number[] {
  const ids = value.split(',').map((s) => s.trim());
  if (ids.some((s) => !/^\d+$/.test(s)))
    throw new UsageError(`--${option}: expected comma-separated token ids, got "${value}"`);
  return ids.map(Number);
}

/**
 * Parses a command's arguments; with --help (added to every command) prints its usage and
 * returns null, so the caller returns 0.
 */
export function parseCommand(
  argv: string[],
  command: string,
  summary: string,
  specs: Record<string, OptionSpec>,
): Parsed['options'] | null {
  const all: Record<string, OptionSpec> = { ...specs, help: { type: 'boolean', help: 'show this help' } };
  const { options } = parseArgs(argv, all, command);
  if (!options.help) return options;
  process.stdout.write(usage(command, summary, all));
  return null;
}

export function usage(command: string, summary: string, specs: Record<string, OptionSpec>): string {
  const lines = Object.entries(specs).map(
    ([name, s]) => `  --${name}${s.type === 'string' ? ' VALUE' : ''}`.padEnd(28) + s.help,
  );
  return `usage: attention-debugger ${command} [options]\n${summary}\n\n${lines.join('\n')}\n`;
}

/** A numeric option, or its default; an error names the option when the value fails `check`. */
export function numberOption(
  value: string | boolean | undefined,
  name: string,
  fallback: number,
  check: (n: number) => boolean,
  expected: string,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !check(n)) throw new UsageError(`--${name}: expected ${expected}, got "${value}"`);
  return n;
}

/** The options every decoding command takes, and their parsing. */
export const DECODING_SPECS: Record<string, OptionSpec> = {
  checkpoint: { type: 'string', help: 'a .safetensors file instead of the run’s newest checkpoint (e.g. an average)' },
  beam: { type: 'string', help: 'beam size (default 4; 1 = greedy)' },
  alpha: { type: 'string', help: 'length penalty α (default 0.6)' },
  'early-stop': {
    type: 'string',
    help:
      'exact (default): stop a sentence when no live hypothesis can beat the k-th finished one | ' +
      'first-k: stop once k have finished (faster; can return worse outputs than greedy)',
  },
  backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu' },
};

export function decodingOptions(options: Parsed['options']): { beamSize: number; alpha: number; earlyStop: EarlyStop } {
  const earlyStop = (options['early-stop'] ?? 'exact') as EarlyStop;
  if (!EARLY_STOPS.includes(earlyStop))
    throw new UsageError(`--early-stop must be one of ${EARLY_STOPS.join(', ')}, got ${JSON.stringify(earlyStop)}`);
  const beamSize = numberOption(options.beam, 'beam', 4, (n) => Number.isInteger(n) && n >= 1, 'a whole number ≥ 1');
  const wide = overLimit('--beam', beamSize, BEAM_LIMIT);
  if (wide) throw new UsageError(wide);
  return {
    beamSize,
    alpha: numberOption(options.alpha, 'alpha', 0.6, (n) => n >= 0, 'a number ≥ 0'),
    earlyStop,
  };
}
