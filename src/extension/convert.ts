/**
 * Wire → panel payloads: the engine sends attention and positional encodings as base64 float32
 * (JSON has no typed arrays); the panels take Float32Array. Each result is checked against the
 * webview protocol's own validator, so a shape that does not match its buffer is an error that
 * names the field here, not a broken panel later.
 */
import { type WireAttention, base64ToFloat32 } from '../protocol/training';
import {
  type AttentionPayload,
  type PositionalPayload,
  checkAttentionPayload,
  checkPositionalPayload,
} from '../protocol/webview';

export function toAttentionPayload(wire: WireAttention, what = 'attention'): AttentionPayload {
  const payload: AttentionPayload = {
    step: wire.step,
    srcTokens: wire.srcTokens,
    tgtTokens: wire.tgtTokens,
    maps: wire.maps.map((m) => ({
      kind: m.kind,
      shape: [m.shape[0], m.shape[1], m.shape[2], m.shape[3]],
      weights: base64ToFloat32(m.data),
    })),
  };
  const why = checkAttentionPayload(payload, what);
  if (why) throw new Error(why);
  return payload;
}

export function toPositionalPayload(wire: { shape: number[]; data: string }, what = 'positional'): PositionalPayload {
  const payload: PositionalPayload = { shape: [wire.shape[0], wire.shape[1]], values: base64ToFloat32(wire.data) };
  const why = checkPositionalPayload(payload, what);
  if (why) throw new Error(why);
  return payload;
}

/** Plain JSON of an attention payload (weights as nested arrays [layer][head][query][key]). */
export function attentionToJson(a: AttentionPayload): unknown {
  return {
    step: a.step,
    srcTokens: a.srcTokens,
    tgtTokens: a.tgtTokens,
    maps: a.maps.map((m) => {
      const [layers, heads, q, k] = m.shape;
      const w = m.weights;
      const nested = Array.from({ length: layers }, (_, l) =>
        Array.from({ length: heads }, (_, h) =>
          Array.from({ length: q }, (_, i) =>
            Array.from(w.subarray(((l * heads + h) * q + i) * k, ((l * heads + h) * q + i + 1) * k)),
          ),
        ),
      );
      return { kind: m.kind, shape: m.shape, weights: nested };
    }),
  };
}
