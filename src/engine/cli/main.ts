/** The engine's command line: `attention-debugger <command> [options]`. */
import { availableBackends } from '../backend';
import { UsageError } from './args';
import { attentionCommand } from './attention';
import { trainCommand } from './train';

const COMMANDS: Record<string, { summary: string; run: (argv: string[]) => Promise<number> }> = {
  train: { summary: 'train on a task, parallel files or gettext catalogs into a run folder', run: trainCommand },
  attention: { summary: 'attention weights and log-probs of a checkpoint for one sentence pair', run: attentionCommand },
  backends: {
    summary: 'list the tfjs backends that load on this machine',
    run: async () => {
      process.stdout.write(`${(await availableBackends()).join('\n')}\n`);
      return 0;
    },
  },
};

function help(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(12)}${c.summary}`);
  return `usage: attention-debugger <command> [options]   (command --help for its options)\n\n${rows.join('\n')}\n`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === 'help') {
    process.stdout.write(help());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`attention-debugger: unknown command "${name}"\n${help()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`attention-debugger: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
