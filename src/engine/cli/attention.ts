/** `attention`: every layer's and head's attention weights and the log-probs for one sentence pair. */
import type { Attention } from '../../protocol/attention';
import { attentionJson } from '../../protocol/export';
import { initBackend } from '../backend';
import { checkpointStep, loadCheckpoint, loadRunCheckpoint, resolveCheckpoint } from '../checkpoint';
import { attentionOfPairs } from '../inspect/attentionOfPairs';
import { BOS, decoderInput, EOS } from '../data/specialTokens';
import { checkAttentionSize } from '../inspect/attentionSize';
import { overLimit } from '../run/limits';
import { RunDir } from '../run/runDir';
import { loadVocabulary, unknownWordsWarning } from '../data/vocabulary';
import { ABLATION_SPECS, ablationGatesOption } from './ablateOptions';
import { type OptionSpec, parseCommand, parseIds, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  checkpoint: { type: 'string', help: 'checkpoint: a folder with config.json, a run folder, or a .safetensors file' },
  run: { type: 'string', help: 'a run folder: its vocabulary reads --src/--tgt, its newest checkpoint is used' },
  src: { type: 'string', help: 'source text (with --run); EOS is appended' },
  tgt: { type: 'string', help: 'target text (with --run); BOS is prepended' },
  'src-ids': { type: 'string', help: 'source token ids, e.g. 5,6,7' },
  'tgt-ids': { type: 'string', help: 'target token ids, starting with BOS, e.g. 1,8,9' },
  'value-weighted': {
    type: 'boolean',
    help: 'also print value_weighted: ‖α_ij · v_j W^O_h‖ per kind (Kobayashi et al.)',
  },
  ...ABLATION_SPECS,
  json: { type: 'boolean', help: 'print one JSON object (the only output format so far)' },
  backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu (default: the first that loads)' },
};
const SUMMARY =
  'Prints one JSON object: run, step, checkpoint, input, src_tokens, tgt_tokens, encoder_self [L][H][S][S], ' +
  'decoder_self [L][H][T][T], cross [L][H][T][S] and log_probs [T][V] (teacher-forced, eval mode); with ' +
  '--value-weighted also value_weighted: { encoder_self, decoder_self, cross } in the same shapes.';

export async function attentionCommand(argv: string[]): Promise<number> {
  const options = parseCommand(argv, 'attention', SUMMARY, specs);
  if (!options) return 0;
  let src: number[];
  let tgt: number[];
  let tokens: (ids: number[]) => string[] = (ids) => ids.map(String);
  let vocabSize: number | undefined;
  let unknown: string[] = [];
  // Text and ids of one side are two answers to one question: both given, one would be ignored.
  for (const side of ['src', 'tgt'])
    if (options[side] !== undefined && options[`${side}-ids`] !== undefined)
      throw new UsageError(
        `attention: --${side} and --${side}-ids both given: give the text (with --run) or the ids, not both`,
      );
  if (options.run) {
    if (options.src === undefined || options.tgt === undefined)
      throw new UsageError('attention: --run needs --src TEXT and --tgt TEXT');
    const vocab = loadVocabulary(new RunDir(options.run as string).vocabPath);
    src = [...vocab.encode(options.src as string), EOS];
    tgt = decoderInput(vocab.encode(options.tgt as string));
    for (const flag of ['src', 'tgt'] as const) {
      const warning = unknownWordsWarning(vocab, options[flag] as string, `attention: --${flag}`);
      if (warning) process.stderr.write(`warning: ${warning}\n`);
    }
    unknown = vocab.unknownWords(`${options.src as string} ${options.tgt as string}`);
    tokens = (ids) => vocab.tokens(ids);
    vocabSize = vocab.size;
  } else {
    for (const required of ['checkpoint', 'src-ids', 'tgt-ids'])
      if (!options[required])
        throw new UsageError(`attention: --${required} is required (or --run with --src and --tgt)`);
    src = parseIds(options['src-ids'] as string, 'src-ids');
    tgt = parseIds(options['tgt-ids'] as string, 'tgt-ids');
    if (tgt[0] !== BOS)
      throw new UsageError(
        `attention: --tgt-ids ${options['tgt-ids'] as string}: the decoder's input starts with BOS (${BOS}): ` +
          `give ${decoderInput(tgt).join(',')}`,
      );
  }
  const backend = await initBackend(options.backend as string | undefined);
  process.stderr.write(`backend: ${backend}\n`);
  const where = (options.checkpoint as string) ?? (options.run as string);
  // With --run, the checkpoint is checked against the run whose vocabulary reads the text.
  const { model, weightsPath } =
    vocabSize !== undefined
      ? loadRunCheckpoint(options.run as string, options.checkpoint as string | undefined, vocabSize)
      : { model: loadCheckpoint(where), weightsPath: resolveCheckpoint(where).weightsPath };
  const { ablation, gates } = ablationGatesOption(options, model, options.run as string | undefined) ?? {};
  try {
    // Sizes before work: every token a position, every map within what the engine computes at once.
    const [srcFlag, tgtFlag] = vocabSize !== undefined ? ['--src', '--tgt'] : ['--src-ids', '--tgt-ids'];
    const positions = { max: model.config.max_len, why: "the model's max_len: a position each" };
    for (const [flag, ids] of [
      [srcFlag, src],
      [tgtFlag, tgt],
    ] as const) {
      const over = overLimit(`${flag} tokens`, ids.length, positions);
      if (over) throw new UsageError(over);
    }
    checkAttentionSize(model.config, src.length, tgt.length);
    const valueWeighted = options['value-weighted'] === true;
    const [pair] = await attentionOfPairs(model, [src], [tgt], gates?.heads, { valueWeighted });
    const attention: Attention = {
      source: { runDir: where, step: checkpointStep(weightsPath), checkpoint: weightsPath, input: 'input' },
      srcTokens: tokens(src),
      tgtTokens: tokens(tgt),
      maps: pair.maps,
    };
    const V = model.config.tgt_vocab;
    const logProbs = Array.from({ length: tgt.length }, (_, t) =>
      Array.from(pair.logProbs.subarray(t * V, (t + 1) * V)),
    );
    const extra = {
      log_probs: logProbs,
      ...(unknown.length ? { unknown_words: unknown } : {}),
      ...(ablation ? { ablation } : {}),
    };
    process.stdout.write(`${attentionJson(attention, extra)}\n`);
    return 0;
  } finally {
    gates?.dispose();
    model.dispose();
  }
}
