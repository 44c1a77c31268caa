/**
 * The model's hyperparameters, named as config.json names them (the checkpoint's companion file),
 * the paper's presets (Table 3: base and big) and small ones that train on two cores.
 */
export interface TransformerConfig {
  d_model: number;
  heads: number; // h; d_k = d_v = d_model / h
  d_ff: number;
  encoder_layers: number; // N
  decoder_layers: number;
  src_vocab: number;
  tgt_vocab: number;
  dropout: number; // P_drop
  norm_first: boolean; // false: the paper's post-LN, LayerNorm(x + Sublayer(x)); true: pre-LN
  final_norm: boolean; // a LayerNorm after each stack (PyTorch nn.Transformer's encoder.norm / decoder.norm)
  positional: 'sinusoidal' | 'learned';
  max_len: number;
  share_embeddings: boolean; // one matrix for source and target embeddings and the pre-softmax projection
  pad_id: number;
  bos_id: number;
  eos_id: number;
}

type Shape = Omit<TransformerConfig, 'src_vocab' | 'tgt_vocab' | 'pad_id' | 'bos_id' | 'eos_id'>;
const common = {
  positional: 'sinusoidal',
  max_len: 512,
  share_embeddings: true,
  norm_first: false,
  final_norm: false,
} as const;

/** Presets; vocabulary sizes and special ids come from the data. */
export const PRESETS: Record<'tiny' | 'small' | 'base' | 'big', Shape> = {
  tiny: {
    ...common,
    d_model: 64,
    heads: 4,
    d_ff: 256,
    encoder_layers: 2,
    decoder_layers: 2,
    dropout: 0.1,
    max_len: 256,
  },
  small: { ...common, d_model: 256, heads: 4, d_ff: 1024, encoder_layers: 3, decoder_layers: 3, dropout: 0.1 },
  base: { ...common, d_model: 512, heads: 8, d_ff: 2048, encoder_layers: 6, decoder_layers: 6, dropout: 0.1 },
  big: { ...common, d_model: 1024, heads: 16, d_ff: 4096, encoder_layers: 6, decoder_layers: 6, dropout: 0.3 },
};
export type PresetName = keyof typeof PRESETS;

export const DEFAULT_SPECIAL_IDS = { pad_id: 0, bos_id: 1, eos_id: 2 } as const;

export class ConfigError extends Error {
  constructor(source: string, field: string, message: string) {
    super(`${source}: ${field}: ${message}`);
    this.name = 'ConfigError';
  }
}

const INT_FIELDS = [
  'd_model',
  'heads',
  'd_ff',
  'encoder_layers',
  'decoder_layers',
  'src_vocab',
  'tgt_vocab',
  'max_len',
  'pad_id',
  'bos_id',
  'eos_id',
] as const;
const BOOL_FIELDS = ['norm_first', 'final_norm', 'share_embeddings'] as const;
/** Every field of the model in config.json. */
export const MODEL_FIELDS: readonly string[] = [...INT_FIELDS, ...BOOL_FIELDS, 'dropout', 'positional'];
/** The other fields a run's config.json holds (docs/RUN_FOLDER.md), which a --config file may carry too. */
export const RUN_CONFIG_FIELDS: readonly string[] = [
  'training',
  'run_format',
  'run_format_version',
  'writer',
  'data',
  'fork',
  'backend',
];

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), for "did you mean". */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/** The known name closest to `name`, when it is close enough to be a typo of it. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const distance = editDistance(name.toLowerCase(), k.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [k, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Refuses a field that is not in `known`, naming the nearest known one (a typo such as "dropuot" is not ignored). */
export function rejectUnknownFields(
  o: Record<string, unknown>,
  known: readonly string[],
  source: string,
  prefix = '',
): void {
  for (const key of Object.keys(o)) {
    if (known.includes(key)) continue;
    const near = nearestName(key, known);
    throw new ConfigError(
      source,
      `${prefix}${key}`,
      near
        ? `unknown field; did you mean "${prefix}${near}"?`
        : `unknown field (known: ${known.map((k) => prefix + k).join(', ')}); remove it or fix its name`,
    );
  }
}

/**
 * Checks a parsed config.json (or any object) and returns it typed. `source` names the file in
 * errors. Unknown keys are allowed (a run's config.json also holds training settings).
 */
export function validateConfig(raw: unknown, source = 'config'): TransformerConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError(source, '(root)', 'expected a JSON object');
  const o = raw as Record<string, unknown>;
  const fail = (field: string, msg: string): never => {
    throw new ConfigError(source, field, msg);
  };
  for (const f of INT_FIELDS) {
    const v = o[f];
    if (v === undefined) fail(f, 'missing');
    if (typeof v !== 'number' || !Number.isInteger(v)) fail(f, `expected an integer, got ${JSON.stringify(v)}`);
  }
  for (const f of BOOL_FIELDS)
    if (typeof o[f] !== 'boolean') fail(f, `expected true or false, got ${JSON.stringify(o[f])}`);
  if (typeof o.dropout !== 'number' || !(o.dropout >= 0 && o.dropout < 1))
    fail('dropout', `expected a number in [0, 1), got ${JSON.stringify(o.dropout)}`);
  if (o.positional !== 'sinusoidal' && o.positional !== 'learned')
    fail('positional', `expected "sinusoidal" or "learned", got ${JSON.stringify(o.positional)}`);
  const c = o as unknown as TransformerConfig;
  for (const f of ['d_model', 'heads', 'd_ff', 'max_len'] as const)
    if (c[f] < 1) fail(f, `must be at least 1, got ${c[f]}`);
  for (const f of ['encoder_layers', 'decoder_layers'] as const)
    if (c[f] < 1) fail(f, `must be at least 1 layer, got ${c[f]}`);
  if (c.d_model % c.heads !== 0)
    fail('d_model', `${c.d_model} is not divisible by heads=${c.heads} (d_k = d_model / h must be whole)`);
  if (c.positional === 'sinusoidal' && c.d_model % 2 !== 0)
    fail('d_model', `sinusoidal positions need an even d_model, got ${c.d_model}`);
  for (const f of ['src_vocab', 'tgt_vocab'] as const)
    if (c[f] < 4) fail(f, `must hold at least the special tokens (4), got ${c[f]}`);
  if (c.share_embeddings && c.src_vocab !== c.tgt_vocab)
    fail('share_embeddings', `needs src_vocab == tgt_vocab, got ${c.src_vocab} and ${c.tgt_vocab}`);
  for (const f of ['pad_id', 'bos_id', 'eos_id'] as const) {
    if (c[f] < 0 || c[f] >= Math.min(c.src_vocab, c.tgt_vocab)) fail(f, `${c[f]} is outside the vocabulary`);
  }
  return c;
}

/** A preset completed with the data's vocabulary, then validated. */
export function configFromPreset(
  name: string,
  vocab: { src_vocab: number; tgt_vocab: number },
  overrides: Partial<TransformerConfig> = {},
): TransformerConfig {
  const preset = PRESETS[name as PresetName];
  if (!preset) {
    const near = nearestName(name, Object.keys(PRESETS));
    throw new ConfigError(
      '--config',
      name,
      `not a preset${near ? ` (did you mean "${near}"?)` : ''}: give ${Object.keys(PRESETS).join(', ')} or a JSON file`,
    );
  }
  return validateConfig({ ...preset, ...DEFAULT_SPECIAL_IDS, ...vocab, ...overrides }, `preset ${name}`);
}

/** The fields of config.json that describe the model, in a stable order. */
export function modelFields(c: TransformerConfig): TransformerConfig {
  return {
    d_model: c.d_model,
    heads: c.heads,
    d_ff: c.d_ff,
    encoder_layers: c.encoder_layers,
    decoder_layers: c.decoder_layers,
    src_vocab: c.src_vocab,
    tgt_vocab: c.tgt_vocab,
    dropout: c.dropout,
    norm_first: c.norm_first,
    final_norm: c.final_norm,
    positional: c.positional,
    max_len: c.max_len,
    share_embeddings: c.share_embeddings,
    pad_id: c.pad_id,
    bos_id: c.bos_id,
    eos_id: c.eos_id,
  };
}
