/**
 * Where engine payloads enter the extension host: attention and positional encodings arrive as
 * base64 float32 (protocol/wire.ts) and are decoded and checked here, once; the panels take the
 * result as it is.
 */
import type { Attention } from '../protocol/attention';
import { type PositionalPayload, checkPositionalPayload } from '../protocol/webview';
import { attentionFromWire, base64ToFloat32, type WireAttention, type WireMatrix } from '../protocol/wire';

export function toAttention(wire: WireAttention, what: string): Attention {
  return attentionFromWire(wire, what);
}

export function toPositionalPayload(wire: WireMatrix, what = 'positional'): PositionalPayload {
  const payload: PositionalPayload = { shape: wire.shape, values: base64ToFloat32(wire.data, `${what}.data`) };
  const why = checkPositionalPayload(payload, what);
  if (why) throw new Error(why);
  return payload;
}
