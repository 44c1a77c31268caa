/** `decode`: translate stdin, one sentence a line, with a run's newest (or a given) checkpoint. */
import { createInterface } from 'node:readline';
import { initBackend } from '../backend';
import { checkpointStep, loadRunCheckpoint } from '../checkpoint';
import { attentionObject } from '../../protocol/export';
import type { BeamTree, EarlyStop } from '../../protocol/beamTree';
import type { Transformer } from '../model/transformer';
import { fitSource, translate, translateWithAttention, type TranslateOptions } from '../decode/translate';
import { EOS } from '../data/specialTokens';
import { loadVocabulary, unknownWordsField, unknownWordsWarning } from '../data/vocabulary';
import { RunDir } from '../run/runDir';
import { ABLATION_SPECS, ablationGatesOption } from './ablateOptions';
import { DECODING_SPECS, decodingOptions, type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder (its vocabulary, and its newest checkpoint unless --checkpoint)' },
  ...DECODING_SPECS,
  ...ABLATION_SPECS,
  json: {
    type: 'boolean',
    help: 'one JSON object a line: tokens, text, score, log_prob and the attention of the chosen hypothesis',
  },
  tree: {
    type: 'boolean',
    help: 'with --json: also the beam search tree (every hypothesis looked at) and greedy’s output',
  },
  truncate: {
    type: 'boolean',
    help: 'cut a line longer than the model’s max_len to its first tokens (and say so) instead of refusing it',
  },
};

/**
 * The search tree as decode --json --tree prints it: token labels beside ids, greedy's output, and
 * the source ids and search settings, so that `report --beam` takes the line (cli/beamFile.ts).
 */
async function treeRecord(
  tree: BeamTree,
  model: Transformer,
  src: number[],
  label: (ids: number[]) => string[],
  opts: TranslateOptions,
  search: { beamSize: number; alpha: number; earlyStop: EarlyStop },
) {
  const [greedy] = await translate(model, [src], { ...opts, beamSize: 1 });
  return {
    nodes: tree.nodes.map((n) => ({ ...n, text: label([n.token])[0] })),
    n_best: tree.nBest,
    greedy: { ids: greedy!.tokens, tokens: label(greedy!.tokens), score: greedy!.score, log_prob: greedy!.logProb },
    src_ids: src,
    beam: search.beamSize,
    alpha: search.alpha,
    early_stop: search.earlyStop,
  };
}

async function readStdin(): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) lines.push(line);
  return lines;
}

export async function decodeCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'decode',
    'Reads sentences from stdin and prints their translations on stdout.',
    specs,
  );
  if (!options) return 0;
  if (!options.run) throw new UsageError('decode: --run RUN is required');
  const decoding = decodingOptions(options);
  if (options.tree && !options.json) throw new UsageError('decode: --tree prints JSON: add --json');
  const run = new RunDir(options.run as string);
  const vocab = loadVocabulary(run.vocabPath);
  const backend = await initBackend(options.backend as string | undefined);
  process.stderr.write(`backend: ${backend}\n`);
  const { model, weightsPath } = loadRunCheckpoint(run.path, options.checkpoint as string | undefined, vocab.size);
  const ablated = ablationGatesOption(options, model, run.path);
  try {
    const heads = ablated ? { heads: ablated.gates.heads } : {};
    const lines = await readStdin();
    // Every line is checked before any is decoded: a refusal prints no partial output.
    const sources = lines.map((line, i) => {
      const where = `stdin line ${i + 1}`;
      const unknown = unknownWordsWarning(vocab, line, `decode: ${where}`);
      if (unknown) process.stderr.write(`warning: ${unknown}\n`);
      const fitted = fitSource([...vocab.encode(line), EOS], model.config.max_len, where, options.truncate === true);
      if (fitted.cutFrom !== undefined)
        process.stderr.write(
          `decode: ${where}: cut from ${fitted.cutFrom} to ${fitted.ids.length} tokens (--truncate)\n`,
        );
      return fitted.ids;
    });
    if (!options.json) {
      const out = await translate(model, sources, { ...decoding, ...heads });
      process.stdout.write(out.map((t) => `${vocab.decode(t.tokens)}\n`).join(''));
      return 0;
    }
    for (const [i, src] of sources.entries()) {
      const t = await translateWithAttention(model, src, { ...decoding, ...heads, tree: options.tree === true });
      const record = {
        source: lines[i],
        ...unknownWordsField(vocab, lines[i]!),
        text: vocab.decode(t.tokens),
        tokens: vocab.tokens(t.tokens),
        ids: t.tokens,
        score: t.score,
        log_prob: t.logProb,
        src_tokens: vocab.tokens(src),
        attention: attentionObject({
          source: { runDir: run.path, step: checkpointStep(weightsPath), checkpoint: weightsPath, input: 'input' },
          srcTokens: vocab.tokens(src),
          tgtTokens: vocab.tokens([model.config.bos_id, ...t.tokens]),
          maps: t.maps,
        }),
        ...(t.tree ? { tree: await treeRecord(t.tree, model, src, (ids) => vocab.tokens(ids), heads, decoding) } : {}),
        ...(ablated ? { ablation: ablated.ablation } : {}),
      };
      process.stdout.write(`${JSON.stringify(record)}\n`);
    }
    return 0;
  } finally {
    ablated?.gates.dispose();
    model.dispose();
  }
}
