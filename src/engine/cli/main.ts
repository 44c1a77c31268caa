/** The engine's command line: `attention-debugger <command> [options]`. */
import { availableBackends, gpuAdapter, matMulDetail } from '../backend';
import { attentionCommand } from './attention';
import { averageCommand } from './average';
import { batchesCommand } from './batches';
import { bleuCommand } from './bleu';
import { checkRunCommand } from './checkRun';
import { decodeCommand } from './decode';
import { evaluateCommand } from './evaluate';
import { headsCommand } from './heads';
import { reportCommand } from './report';
import { trainCommand } from './train';
import { runServer } from '../server';
import { type OptionSpec, parseCommand, UsageError } from './args';

const COMMANDS: Record<string, { summary: string; run: (argv: string[]) => Promise<number> }> = {
  train: { summary: 'train on a task, parallel files or gettext catalogs into a run folder', run: trainCommand },
  decode: { summary: 'translate stdin with a run (greedy or beam search)', run: decodeCommand },
  evaluate: { summary: "decode a run's test split and print its BLEU", run: evaluateCommand },
  bleu: { summary: 'corpus BLEU, printed as sacreBLEU prints it', run: bleuCommand },
  average: { summary: 'average the last n checkpoints of a run', run: averageCommand },
  batches: {
    summary: "write a run's validation and first N training batches (token ids) to a file for another trainer",
    run: batchesCommand,
  },
  heads: { summary: 'head importance (Michel et al.) and pruning curves on the test split', run: headsCommand },
  attention: {
    summary: 'attention weights and log-probs of a checkpoint for one sentence pair',
    run: attentionCommand,
  },
  report: {
    summary: "write a run's report as one self-contained HTML file that opens offline in any browser",
    run: reportCommand,
  },
  'check-run': { summary: 'check a run folder (engine or PyTorch) against its format', run: checkRunCommand },
  serve: {
    summary: 'serve the engine over JSON-RPC on stdin/stdout (the VS Code extension starts this)',
    run: async (argv) => {
      const specs: Record<string, OptionSpec> = {
        backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu' },
      };
      const options = parseCommand(argv, 'serve', 'Serves the engine over JSON-RPC on stdin/stdout.', specs);
      if (!options) return 0;
      return runServer(options.backend ? { backend: options.backend as string } : {});
    },
  },
  backends: {
    summary: 'list the tfjs backends that load on this machine',
    run: async () => {
      const names = await availableBackends();
      process.stdout.write(
        names
          .map((n) =>
            n === 'wasm' ? `wasm (matMul: ${matMulDetail('wasm')})` : n === 'webgpu' ? `webgpu (${gpuAdapter()})` : n,
          )
          .join('\n') + '\n',
      );
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

/** An error as the user reads it: wasm's bare abort says what most often causes it and what to do. */
export function describeError(err: Error): string {
  if (/^Aborted\(/.test(err.message))
    return (
      'the wasm backend aborted (most often its 4 GiB heap ran out): use a smaller model or --batch-tokens, ' +
      `or another --backend (${err.message.split('.')[0]})`
    );
  return err.message;
}

// `node dist/cli.js <command>` runs the CLI too (the extension spawns the engine this way).
if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error) => {
      process.stderr.write(`attention-debugger: ${describeError(err)}\n`);
      process.exitCode = 1;
    },
  );
}
