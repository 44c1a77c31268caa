/**
 * The safetensors files of a run folder against docs/RUN_FOLDER.md: checkpoints (the model in the
 * nn.Transformer layout, and the optimizer's moments beside it) and format-2 attention snapshots.
 * Pure checks: nothing is written; every problem names the file and the tensor or field.
 */
import { checkRegularFile, FileRefused, readRegularFile } from '../io/regularFile';
import { readSafetensors } from '../checkpoint/safetensors';
import { firstNonFinite } from '../checkpoint';
import type { TransformerConfig } from '../model/config';
import { parameterSpecs, SHARED_NAMES } from '../model/params';
import { ATTENTION_KINDS } from '../../protocol/attention';
import type { RunProblem } from '../../protocol/runCheck';
import { snapshotTensorName } from '../../protocol/runFolder';

/** One problem of a run folder: its file, line and field (the wire's type, which run/check answers with). */
export type { RunProblem } from '../../protocol/runCheck';

export interface HeaderEntry {
  dtype: string;
  shape: number[];
  offsets: [number, number];
}

const BYTES: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, U8: 1 };
const FLOAT_DTYPES = ['F32', 'F64', 'F16', 'BF16'];
const MAX_HEADER = 100 * 1024 * 1024;

/**
 * Reads and checks a safetensors header without reading the data: the length prefix, the JSON, each
 * entry's dtype, shape and offsets, and that the tensors tile the data section exactly up to the
 * file's end (a truncated or half-written file fails here).
 */
export function readHeader(
  path: string,
  file: string,
  problems: RunProblem[],
): { tensors: Map<string, HeaderEntry>; metadata: Record<string, unknown> } | undefined {
  const fail = (message: string, field?: string) => {
    problems.push({ file, ...(field ? { field } : {}), message });
    return undefined;
  };
  let size: number;
  try {
    size = checkRegularFile(path, 'tensors').size; // a FIFO or a link to a device is refused unopened
  } catch (err) {
    if (!(err instanceof FileRefused)) throw err;
    return fail(err.reason);
  }
  if (size < 8) return fail(`${size} bytes: too short for a safetensors file (torn or truncated)`);
  let header: unknown;
  const n = Number(readRegularFile(path, 'tensors', 0, 8).readBigUInt64LE(0));
  if (n > MAX_HEADER || 8 + n > size)
    return fail(`header length ${n} runs past the end of the file (${size} bytes): torn or not safetensors`);
  const text = readRegularFile(path, 'tensors', 8, n);
  try {
    header = JSON.parse(text.toString('utf8'));
  } catch (err) {
    return fail(`header is not valid JSON (${(err as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    return fail('header is not a JSON object');
  const dataLength = size - 8 - n;
  const tensors = new Map<string, HeaderEntry>();
  let metadata: Record<string, unknown> = {};
  const spans: [number, number, string][] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        return fail('__metadata__ must be an object of strings', '__metadata__');
      metadata = raw as Record<string, unknown>;
      continue;
    }
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e !== 'object' || e === null || typeof e.dtype !== 'string' || !(e.dtype in BYTES))
      return fail(`dtype ${JSON.stringify(e?.dtype)} is not one of ${Object.keys(BYTES).join(', ')}`, name);
    if (!Array.isArray(e.shape) || !e.shape.every((s) => Number.isInteger(s) && s >= 0))
      return fail(`shape ${JSON.stringify(e.shape)} is not a list of sizes`, name);
    const o = e.data_offsets;
    if (!Array.isArray(o) || o.length !== 2 || !o.every((x) => Number.isInteger(x) && x >= 0) || o[1] < o[0])
      return fail(`bad data_offsets ${JSON.stringify(o)}`, name);
    const shape = e.shape as number[];
    const need = shape.reduce((a, b) => a * b, 1) * BYTES[e.dtype]!;
    if (o[1] - o[0] !== need)
      return fail(`shape [${shape}] of ${e.dtype} needs ${need} bytes, data_offsets span ${o[1] - o[0]}`, name);
    if (o[1] > dataLength)
      return fail(`data [${o[0]}, ${o[1]}) runs past the end of the data (${dataLength} bytes): torn file`, name);
    tensors.set(name, { dtype: e.dtype, shape, offsets: [o[0], o[1]] });
    spans.push([o[0], o[1], name]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let end = 0;
  for (const [begin, stop, name] of spans) {
    if (begin !== end) return fail(`data starts at ${begin}, expected ${end} (a gap or an overlap)`, name);
    end = stop;
  }
  if (end !== dataLength)
    return fail(`the tensors cover ${end} of the ${dataLength} data bytes after the header (torn or padded file)`);
  return { tensors, metadata };
}

function stepMetadata(metadata: Record<string, unknown>, step: number, file: string, problems: RunProblem[]): void {
  if (metadata.step !== undefined && metadata.step !== String(step))
    problems.push({
      file,
      field: '__metadata__.step',
      message: `is ${JSON.stringify(metadata.step)}, the name says ${step}`,
    });
}

/**
 * A model checkpoint: every tensor the config needs, in a float dtype, of the config's shape, and
 * nothing else; with `values`, no NaN or infinity in it (which reads the whole file).
 */
export function checkCheckpoint(
  path: string,
  file: string,
  config: TransformerConfig | undefined,
  step: number | undefined,
  problems: RunProblem[],
  values = true,
): void {
  const h = readHeader(path, file, problems);
  if (!h) return;
  if (step !== undefined) stepMetadata(h.metadata, step, file, problems);
  if (!config) return;
  const specs = parameterSpecs(config);
  for (const spec of specs) {
    const t = h.tensors.get(spec.name);
    if (!t) {
      if (!(config.share_embeddings && SHARED_NAMES.includes(spec.name)))
        problems.push({ file, field: spec.name, message: `missing (config expects [${spec.shape}])` });
    } else if (t.shape.join(',') !== spec.shape.join(',')) {
      problems.push({ file, field: spec.name, message: `has shape [${t.shape}], config expects [${spec.shape}]` });
    } else if (!FLOAT_DTYPES.includes(t.dtype)) {
      problems.push({ file, field: spec.name, message: `dtype ${t.dtype} is not one of ${FLOAT_DTYPES.join(', ')}` });
    }
  }
  const known = new Set(specs.map((s) => s.name));
  for (const name of h.tensors.keys())
    if (!known.has(name)) problems.push({ file, field: name, message: 'is not a tensor of this config' });
  // Its values, once its layout is sound: a NaN or an infinity, which every other command refuses.
  if (!values || problems.some((p) => p.file === file)) return;
  const bad = firstNonFinite(readSafetensors(path).tensors);
  if (bad) problems.push({ file, field: bad.name, message: bad.message });
}

/** An optimizer file: `<param>.<moment>` tensors of their parameter's shape, and metadata step = N. */
export function checkOptimizer(
  path: string,
  file: string,
  config: TransformerConfig | undefined,
  step: number,
  problems: RunProblem[],
): void {
  const h = readHeader(path, file, problems);
  if (!h) return;
  stepMetadata(h.metadata, step, file, problems);
  if (!config) return;
  const shapes = new Map(parameterSpecs(config).map((s) => [s.name, s.shape.join(',')]));
  for (const [name, t] of h.tensors) {
    const dot = name.lastIndexOf('.');
    const param = name.slice(0, dot);
    if (!shapes.has(param)) problems.push({ file, field: name, message: 'names no parameter of this config' });
    else if (shapes.get(param) !== t.shape.join(','))
      problems.push({ file, field: name, message: `has shape [${t.shape}], its parameter [${shapes.get(param)}]` });
  }
}

function parsePairs(
  value: unknown,
  file: string,
  problems: RunProblem[],
): { src: string[]; tgt: string[] }[] | undefined {
  const fail = (message: string) => {
    problems.push({ file, field: '__metadata__.pairs', message });
    return undefined;
  };
  if (typeof value !== 'string') return fail('missing: a JSON array of {"src": [...], "tgt": [...]}');
  let pairs: unknown;
  try {
    pairs = JSON.parse(value);
  } catch (err) {
    return fail(`not valid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(pairs) || pairs.length === 0) return fail('must be a non-empty array');
  const strings = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string');
  for (const [i, p] of pairs.entries())
    if (typeof p !== 'object' || p === null || !strings(p.src) || !strings(p.tgt))
      return fail(`pair ${i} must be {"src": [token strings], "tgt": [token strings]}, non-empty`);
  return pairs as { src: string[]; tgt: string[] }[];
}

/**
 * A format-2 snapshot: metadata step, run_format_version "2" and pairs; for each pair and kind a
 * float32 tensor `<kind>.<pair>` [layers, heads, queries, keys] whose rows are distributions
 * (non-negative, summing to 1) and, for decoder_self, zero above the diagonal.
 */
export function checkSnapshot(
  path: string,
  file: string,
  config: TransformerConfig | undefined,
  step: number,
  problems: RunProblem[],
): void {
  const h = readHeader(path, file, problems);
  if (!h) return;
  stepMetadata(h.metadata, step, file, problems);
  if (h.metadata.step === undefined) problems.push({ file, field: '__metadata__.step', message: 'missing' });
  if (h.metadata.run_format_version !== '2')
    problems.push({
      file,
      field: '__metadata__.run_format_version',
      message: `must be "2", got ${JSON.stringify(h.metadata.run_format_version)}`,
    });
  const pairs = parsePairs(h.metadata.pairs, file, problems);
  if (!pairs || !config) return;
  const data = readSafetensors(path).tensors;
  const expected = new Set<string>();
  pairs.forEach((pair, b) => {
    for (const kind of ATTENTION_KINDS) {
      const name = snapshotTensorName(kind, b);
      expected.add(name);
      const layers = kind === 'encoder_self' ? config.encoder_layers : config.decoder_layers;
      const q = kind === 'encoder_self' ? pair.src.length : pair.tgt.length;
      const k = kind === 'decoder_self' ? pair.tgt.length : pair.src.length;
      const want = [layers, config.heads, q, k];
      const entry = h.tensors.get(name);
      if (!entry) {
        problems.push({ file, field: name, message: `missing (expected [${want}])` });
        continue;
      }
      if (entry.dtype !== 'F32') problems.push({ file, field: name, message: `dtype ${entry.dtype}, expected F32` });
      if (entry.shape.join(',') !== want.join(',')) {
        problems.push({
          file,
          field: name,
          message: `has shape [${entry.shape}], expected [${want}] (layers, heads, queries, keys)`,
        });
        continue;
      }
      const why = rowProblem(data.get(name)!.data, q, k, kind === 'decoder_self');
      if (why) problems.push({ file, field: name, message: why });
    }
  });
  for (const name of h.tensors.keys())
    if (!expected.has(name)) problems.push({ file, field: name, message: "is not a tensor of this snapshot's pairs" });
}

/** The first row that is not a distribution (or not causal), described; undefined when all are. */
function rowProblem(values: Float32Array, q: number, k: number, causal: boolean): string | undefined {
  for (let r = 0; r * k < values.length; r++) {
    let sum = 0;
    const query = r % q;
    for (let j = 0; j < k; j++) {
      const v = values[r * k + j]!;
      if (!Number.isFinite(v) || v < 0) return `row ${r} (query ${query}) holds ${v}: not a probability`;
      if (causal && j > query && v > 1e-7) return `query ${query} attends to later key ${j} (${v}): not causal`;
      sum += v;
    }
    if (Math.abs(sum - 1) > 1e-3) return `row ${r} (query ${query}) sums to ${sum}, not 1`;
  }
  return undefined;
}
