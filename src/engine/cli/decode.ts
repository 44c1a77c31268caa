/** `decode`: translate stdin, one sentence a line, with a run's newest (or a given) checkpoint. */
import { createInterface } from 'node:readline';
import { initBackend } from '../backend';
import { loadCheckpoint } from '../checkpoint';
import { translate, translateWithAttention } from '../decode/translate';
import { EOS } from '../data/vocab';
import { loadVocabulary } from '../train/vocabulary';
import { RunDir } from '../train/runDir';
import { parseArgs, usage, UsageError, type OptionSpec } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder (its vocabulary, and its newest checkpoint unless --checkpoint)' },
  checkpoint: { type: 'string', help: 'a .safetensors file to use instead (e.g. an average)' },
  beam: { type: 'string', help: 'beam size (default 4; 1 = greedy)' },
  alpha: { type: 'string', help: 'length penalty α (default 0.6)' },
  json: { type: 'boolean', help: 'one JSON object a line: tokens, text, score, log_prob and the attention of the chosen hypothesis' },
  backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu' },
  help: { type: 'boolean', help: 'show this help' },
};

function numberOption(value: unknown, name: string, fallback: number, check: (n: number) => boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!check(n)) throw new UsageError(`--${name}: invalid value "${value}"`);
  return n;
}

async function readStdin(): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) lines.push(line);
  return lines;
}

export async function decodeCommand(argv: string[]): Promise<number> {
  const { options } = parseArgs(argv, specs, 'decode');
  if (options.help) {
    process.stdout.write(usage('decode', 'Reads sentences from stdin and prints their translations on stdout.', specs));
    return 0;
  }
  if (!options.run) throw new UsageError('decode: --run RUN is required');
  const beamSize = numberOption(options.beam, 'beam', 4, (n) => Number.isInteger(n) && n >= 1);
  const alpha = numberOption(options.alpha, 'alpha', 0.6, (n) => n >= 0);
  const run = new RunDir(options.run as string);
  const vocab = loadVocabulary(run.vocabPath);
  const backend = await initBackend(options.backend as string | undefined);
  process.stderr.write(`backend: ${backend}\n`);
  const model = loadCheckpoint((options.checkpoint as string) ?? run.path);
  try {
    const lines = await readStdin();
    const sources = lines.map((line) => [...vocab.encode(line), EOS].slice(-model.config.max_len));
    if (!options.json) {
      const out = await translate(model, sources, { beamSize, alpha });
      process.stdout.write(out.map((t) => `${vocab.decode(t.tokens)}\n`).join(''));
      return 0;
    }
    for (const [i, src] of sources.entries()) {
      const t = await translateWithAttention(model, src, { beamSize, alpha });
      const record = { source: lines[i], text: vocab.decode(t.tokens), tokens: vocab.tokens(t.tokens), ids: t.tokens, score: t.score, log_prob: t.logProb, src_tokens: vocab.tokens(src), attention: t.attention };
      process.stdout.write(`${JSON.stringify(record)}\n`);
    }
    return 0;
  } finally {
    model.dispose();
  }
}
