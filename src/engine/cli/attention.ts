/** `attention`: every layer's and head's attention weights and the log-probs for one sentence pair. */
import { initBackend } from '../backend';
import { loadCheckpoint } from '../checkpoint';
import { attentionReport } from '../inspect';
import { BOS, EOS } from '../data/specialTokens';
import { RunDir } from '../run/runDir';
import { loadVocabulary } from '../data/vocabulary';
import { type OptionSpec, parseCommand, parseIds, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  checkpoint: { type: 'string', help: 'checkpoint: a folder with config.json, a run folder, or a .safetensors file' },
  run: { type: 'string', help: 'a run folder: its vocabulary reads --src/--tgt, its newest checkpoint is used' },
  src: { type: 'string', help: 'source text (with --run); EOS is appended' },
  tgt: { type: 'string', help: 'target text (with --run); BOS is prepended' },
  'src-ids': { type: 'string', help: 'source token ids, e.g. 5,6,7' },
  'tgt-ids': { type: 'string', help: 'target token ids, starting with BOS, e.g. 1,8,9' },
  json: { type: 'boolean', help: 'print one JSON object (the only output format so far)' },
  backend: { type: 'string', help: 'webgpu | tensorflow | wasm | cpu (default: the first that loads)' },
};
const SUMMARY =
  'Prints encoder_self [L][H][S][S], decoder_self [L][H][T][T], cross [L][H][T][S] and log_probs [T][V] (teacher-forced, eval mode).';

export async function attentionCommand(argv: string[]): Promise<number> {
  const options = parseCommand(argv, 'attention', SUMMARY, specs);
  if (!options) return 0;
  let src: number[];
  let tgt: number[];
  let labels: { src_tokens: string[]; tgt_tokens: string[] } | undefined;
  if (options.run) {
    if (options.src === undefined || options.tgt === undefined)
      throw new UsageError('attention: --run needs --src TEXT and --tgt TEXT');
    const vocab = loadVocabulary(new RunDir(options.run as string).vocabPath);
    src = [...vocab.encode(options.src as string), EOS];
    tgt = [BOS, ...vocab.encode(options.tgt as string)];
    labels = { src_tokens: vocab.tokens(src), tgt_tokens: vocab.tokens(tgt) };
  } else {
    for (const required of ['checkpoint', 'src-ids', 'tgt-ids'])
      if (!options[required])
        throw new UsageError(`attention: --${required} is required (or --run with --src and --tgt)`);
    src = parseIds(options['src-ids'] as string, 'src-ids');
    tgt = parseIds(options['tgt-ids'] as string, 'tgt-ids');
  }
  const backend = await initBackend(options.backend as string | undefined);
  process.stderr.write(`backend: ${backend}\n`);
  const model = loadCheckpoint((options.checkpoint as string) ?? (options.run as string));
  try {
    const r = await attentionReport(model, [src], [tgt]);
    const out = {
      ...labels,
      encoder_self: r.encoder_self[0],
      decoder_self: r.decoder_self[0],
      cross: r.cross[0],
      log_probs: r.log_probs[0],
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}
