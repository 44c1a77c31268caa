/**
 * Attention snapshots of the probe pair(s), as docs/RUN_FOLDER.md defines them: format 2 is one
 * safetensors file a step (a [layers, heads, queries, keys] tensor `<kind>.<pair>` per kind and
 * pair; token labels in the metadata); format 1 was nested JSON arrays of one pair, still read.
 */
import { readJsonFile } from '../io/json';
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps } from '../../protocol/attention';
import { RUN_FORMAT_VERSION, snapshotTensorName } from '../../protocol/runFolder';
import { readSafetensors, writeSafetensors, type NamedTensor } from '../checkpoint/safetensors';

/** One probe pair's token labels (and ids, which let the pair be run again at any checkpoint) and attention maps. */
export interface SnapshotPair {
  src: string[];
  tgt: string[];
  srcIds?: number[];
  tgtIds?: number[];
  maps: AttentionMaps[];
}

export interface Snapshot {
  step: number;
  pairs: SnapshotPair[];
}

export function writeSnapshotFile(path: string, snapshot: Snapshot): void {
  const tensors = new Map<string, NamedTensor>();
  snapshot.pairs.forEach((p, b) => {
    for (const m of p.maps) tensors.set(snapshotTensorName(m.kind, b), { shape: [...m.shape], data: m.weights });
  });
  writeSafetensors(path, tensors, {
    step: String(snapshot.step),
    run_format_version: String(RUN_FORMAT_VERSION),
    pairs: JSON.stringify(
      snapshot.pairs.map((p) => ({
        src: p.src,
        tgt: p.tgt,
        ...(p.srcIds && p.tgtIds ? { src_ids: p.srcIds, tgt_ids: p.tgtIds } : {}),
      })),
    ),
  });
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0);

interface PairLabels {
  src: string[];
  tgt: string[];
  src_ids?: unknown;
  tgt_ids?: unknown;
}

/** Reads a snapshot of either format; errors name the file and what is wrong. */
export function readSnapshotFile(path: string): Snapshot {
  return path.endsWith('.json') ? readLegacy(path) : readFormat2(path);
}

function readFormat2(path: string): Snapshot {
  const { tensors, metadata } = readSafetensors(path);
  let pairs: unknown;
  try {
    pairs = JSON.parse(metadata.pairs ?? '');
  } catch {
    throw new Error(`${path}: metadata "pairs" is not JSON`);
  }
  if (!Array.isArray(pairs) || !pairs.every((p) => isStrings(p?.src) && isStrings(p?.tgt)))
    throw new Error(`${path}: metadata "pairs" must be a list of {"src": [tokens], "tgt": [tokens]}`);
  const step = Number(metadata.step);
  if (!Number.isInteger(step) || step < 0) throw new Error(`${path}: metadata "step" must be a whole number`);
  return {
    step,
    pairs: (pairs as PairLabels[]).map((p, b) => {
      const maps: AttentionMaps[] = [];
      for (const kind of ATTENTION_KINDS) {
        const t = tensors.get(snapshotTensorName(kind, b));
        if (!t) continue;
        if (t.shape.length !== 4) throw new Error(`${path}: tensor "${kind}.${b}" must have 4 dimensions`);
        maps.push({ kind, shape: t.shape as AttentionMaps['shape'], weights: t.data });
      }
      const ids = isIds(p.src_ids) && isIds(p.tgt_ids) ? { srcIds: p.src_ids, tgtIds: p.tgt_ids } : {};
      return { src: p.src, tgt: p.tgt, ...ids, maps };
    }),
  };
}

type Nested = number[][][][];

/** Format 1: {"step", "src", "tgt", "attention": {kind: [layer][head][query][key]}}. */
function readLegacy(path: string): Snapshot {
  const raw = readJsonFile(path) as {
    step: number;
    src: string[];
    tgt: string[];
    attention: Partial<Record<AttentionKind, Nested>>;
  };
  const maps: AttentionMaps[] = [];
  for (const kind of ATTENTION_KINDS) {
    const n = raw.attention?.[kind];
    if (!n?.length) continue;
    const shape: AttentionMaps['shape'] = [n.length, n[0].length, n[0][0].length, n[0][0][0].length];
    maps.push({ kind, shape, weights: Float32Array.from(n.flat(3)) });
  }
  return { step: raw.step, pairs: [{ src: raw.src, tgt: raw.tgt, maps }] };
}
