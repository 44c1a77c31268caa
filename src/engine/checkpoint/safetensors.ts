/**
 * The safetensors format: an 8-byte little-endian header length N, N bytes of JSON
 * ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}), then the data,
 * offsets relative to the end of the header. Every inconsistency is an error naming the file and
 * the tensor; nothing is trusted before it is checked.
 */
import { readRegularFile } from '../io/regularFile';
import { writeFileAtomic } from '../io/atomicFile';

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

const BYTES: Record<string, number> = { F32: 4, F64: 8, F16: 2, BF16: 2 };
const MAX_HEADER = 100 * 1024 * 1024;

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

/** Converts the stored bytes of one tensor to float32. */
function toFloat32(bytes: Buffer, dtype: string, count: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    switch (dtype) {
      case 'F32':
        out[i] = bytes.readFloatLE(i * 4);
        break;
      case 'F64':
        out[i] = bytes.readDoubleLE(i * 8);
        break;
      case 'F16':
        out[i] = halfToFloat(bytes.readUInt16LE(i * 2));
        break;
      case 'BF16':
        out[i] = new Float32Array(new Uint32Array([bytes.readUInt16LE(i * 2) << 16]).buffer)[0];
        break;
    }
  }
  return out;
}

/** Parses a safetensors file into float32 tensors (F32, F64, F16 and BF16 are accepted). */
export function readSafetensors(path: string): { tensors: Map<string, NamedTensor>; metadata: Record<string, string> } {
  const buf = readRegularFile(path, 'tensors');
  const fail = (msg: string): never => {
    throw new Error(`${path}: ${msg}`);
  };
  if (buf.length < 8) fail(`${buf.length} bytes: too short for a safetensors file (truncated?)`);
  const n = Number(buf.readBigUInt64LE(0));
  if (n > MAX_HEADER || 8 + n > buf.length)
    fail(`header length ${n} runs past the end of the file (${buf.length} bytes): truncated or not safetensors`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  } catch (err) {
    return fail(`header is not valid JSON (${(err as Error).message})`);
  }
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a JSON array' : typeof v);
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    fail(
      `header is ${kind(header)}, expected an object of tensors {name: {dtype, shape, data_offsets}}: not safetensors`,
    );
  const dataStart = 8 + n;
  const dataLen = buf.length - dataStart;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  const spans: [number, number, string][] = []; // [begin, end, name] of each tensor's data
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
        fail(`__metadata__ is ${kind(entry)}, expected an object of strings`);
      for (const [key, value] of Object.entries(entry as object))
        if (typeof value !== 'string')
          fail(
            `__metadata__.${key}: expected a string (safetensors metadata holds strings), got ${JSON.stringify(value)}`,
          );
      metadata = entry as Record<string, string>;
      continue;
    }
    const where = `tensor "${name}"`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      fail(`${where}: is ${kind(entry)}, expected an object {dtype, shape, data_offsets}`);
    const e = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e.dtype !== 'string' || !(e.dtype in BYTES))
      fail(`${where}: dtype ${JSON.stringify(e.dtype)} is not one of ${Object.keys(BYTES).join(', ')}`);
    if (!Array.isArray(e.shape) || !e.shape.every((s) => Number.isInteger(s) && s >= 0))
      fail(`${where}: shape ${JSON.stringify(e.shape)} is not a list of sizes`);
    const offsets = e.data_offsets as number[];
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(Number.isInteger))
      fail(`${where}: bad data_offsets ${JSON.stringify(e.data_offsets)}`);
    const shape = e.shape as number[];
    const count = shape.reduce((a, b) => a * b, 1);
    const [begin, end] = offsets;
    const width = BYTES[e.dtype as string];
    if (end - begin !== count * width)
      fail(`${where}: shape [${shape}] of ${e.dtype} needs ${count * width} bytes, data_offsets span ${end - begin}`);
    if (begin < 0 || end > dataLen)
      fail(`${where}: data [${begin}, ${end}) runs past the end of the data (${dataLen} bytes): truncated file`);
    tensors.set(name, {
      shape,
      data: toFloat32(buf.subarray(dataStart + begin, dataStart + end), e.dtype as string, count),
    });
    spans.push([begin, end, name]);
  }
  // Each tensor owns its bytes: a header whose spans overlap would load one tensor's data as another's.
  spans.sort((a, b) => a[0] - b[0]);
  let reach: [number, string] = [0, '']; // the furthest end so far, and its tensor
  for (const [begin, stop, name] of spans) {
    if (begin === stop) continue; // an empty tensor owns no bytes
    if (begin < reach[0])
      fail(
        `tensor "${name}": data [${begin}, ${stop}) overlaps tensor "${reach[1]}" (ends at ${reach[0]}): two ` +
          'tensors cannot share bytes; the header is corrupt',
      );
    reach = [stop, name];
  }
  return { tensors, metadata };
}

/** Writes float32 tensors as safetensors, atomically. Names keep the given order. */
export function writeSafetensors(
  path: string,
  tensors: Map<string, NamedTensor>,
  metadata: Record<string, string> = {},
): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt', ...metadata } };
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`tensor "${name}": shape [${t.shape}] does not match ${t.data.length} values`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + count * 4] };
    offset += count * 4;
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - (json.length % 8)) % 8; // keep the data 8-byte aligned, as the reference writer does
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const chunks: Uint8Array[] = [len, json];
  for (const t of tensors.values()) chunks.push(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  writeFileAtomic(path, chunks);
}
