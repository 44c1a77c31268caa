/**
 * The engine ↔ extension wire's one conversion: float32 buffers as base64 inside JSON-RPC (JSON has
 * no typed arrays). Both ends of that wire are Node processes, so this file uses Node's Buffer,
 * which encodes and decodes in one native pass; webviews never import it (they get Float32Arrays
 * by postMessage).
 */
import { type Attention, type AttentionMaps, attentionCheck, checkAttention } from './attention';
import { type AttentionBlock, blockCheck } from './attentionBlock';
import { type Check, isFloat32Array, isString, object, shapeOf } from './check';

/** Float32 values as base64 of their little-endian bytes. */
export function float32ToBase64(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/** The inverse of float32ToBase64, into a fresh (aligned) buffer. */
export function base64ToFloat32(text: string, what = 'data'): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw new Error(`${what}: ${bytes.length} bytes is not whole float32 values`);
  const out = new Float32Array(bytes.length / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** Attention as the wire carries it: weights as base64 strings. */
export type WireAttention = Attention<string>;

/** Base64 of n float32 values has 4·⌈4n/3⌉ characters (the padding counted off without copying the text). */
const base64Length = (w: unknown) => {
  const s = w as string;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor(((s.length - pad) * 3) / 4 / 4);
};

export const checkWireAttention: Check<WireAttention> = attentionCheck(isString, base64Length);

export function attentionToWire(a: Attention): WireAttention {
  return { ...a, maps: a.maps.map(mapsToWire) };
}

/** One kind's maps with their weights (and value-weighted norms, when present) as base64. */
function mapsToWire({ valueWeighted, ...m }: AttentionMaps): AttentionMaps<string> {
  const weights = float32ToBase64(m.weights);
  return valueWeighted ? { ...m, weights, valueWeighted: float32ToBase64(valueWeighted) } : { ...m, weights };
}

/** Decodes one kind's maps that arrived on the wire (`what` names them: `….maps[i]`). */
export function mapsFromWire(m: AttentionMaps<string>, what: string): AttentionMaps {
  const { valueWeighted, ...rest } = m;
  const weights = base64ToFloat32(m.weights, `${what}.weights`);
  if (valueWeighted === undefined) return { ...rest, weights };
  return { ...rest, weights, valueWeighted: base64ToFloat32(valueWeighted, `${what}.valueWeighted`) };
}

/** The attention of `w` with its maps decoded (mapsFromWire), checked; the error names the field. */
export function checkedAttention(w: WireAttention, maps: AttentionMaps[], what: string): Attention {
  const a: Attention = { ...w, maps };
  const why = checkAttention(a, what);
  if (why) throw new Error(why);
  return a;
}

/** Decodes and checks attention that arrived on the wire; the error names the field. */
export function attentionFromWire(w: WireAttention, what: string): Attention {
  return checkedAttention(
    w,
    w.maps.map((m, i) => mapsFromWire(m, `${what}.maps[${i}]`)),
    what,
  );
}

/** A matrix on the wire: [rows, cols] and base64 float32. */
export interface WireMatrix {
  shape: [rows: number, cols: number];
  data: string;
}

export const checkWireMatrix: Check<WireMatrix> = object({ shape: shapeOf<WireMatrix['shape']>(2), data: isString });

export function matrixToWire(shape: [number, number], values: Float32Array): WireMatrix {
  return { shape, data: float32ToBase64(values) };
}

/** A block of one head (attention/block) as the extension holds it: its base64 decoded once, and checked. */
export function blockFromWire(w: AttentionBlock<string>, what: string): AttentionBlock {
  const b: AttentionBlock = { ...w, weights: base64ToFloat32(w.weights, `${what}.weights`) };
  const why = blockCheck(isFloat32Array, (v) => (v as Float32Array).length)(b, what);
  if (why) throw new Error(why);
  return b;
}
