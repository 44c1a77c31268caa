/** A small, strict command-line parser: `--name value`, `--name=value`, boolean `--flag`. */
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
      if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`${command}: --${name} needs a value`);
      options[name] = value;
    }
  }
  return { options, positional };
}

/** "5,6,7" → [5, 6, 7], with an error that names the option. */
export function parseIds(value: string, option: string): number[] {
  const ids = value.split(',').map((s) => s.trim());
  if (ids.some((s) => !/^\d+$/.test(s))) throw new UsageError(`--${option}: expected comma-separated token ids, got "${value}"`);
  return ids.map(Number);
}

export function usage(command: string, summary: string, specs: Record<string, OptionSpec>): string {
  const lines = Object.entries(specs).map(([name, s]) => `  --${name}${s.type === 'string' ? ' VALUE' : ''}`.padEnd(28) + s.help);
  return `usage: attention-debugger ${command} [options]\n${summary}\n\n${lines.join('\n')}\n`;
}
