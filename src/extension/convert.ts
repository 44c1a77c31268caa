/**
 * Decoding engine payloads in the extension host: attention and positional encodings arrive as
 * base64 float32 (protocol/wire.ts) and are decoded and checked once; the panels take the result as
 * it is. Attention is decoded in one go by protocol/wire.ts's attentionFromWire (snapshots, a beam-tree node), or by
 * toAttentionInTurns here, one kind per event-loop turn, where a reply may be large (the attention
 * view's attention/get); positional encodings by toPositionalPayload.
 */
import type { Attention, AttentionMaps } from '../protocol/attention';
import { type PositionalPayload, checkPositionalPayload } from '../protocol/webview';
import { base64ToFloat32, checkedAttention, mapsFromWire, type WireAttention, type WireMatrix } from '../protocol/wire';

/** The end of this event-loop turn: what waits (other replies, the pages' messages, timers) runs first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * attentionFromWire one kind per event-loop turn, for attention/get's replies (up to 3 kinds × 48 maps
 * of 64² pooled cells, 3.1 MB of base64, at any input length; or up to 256² whole weights each).
 * The reply's parse by vscode-jsonrpc is one task of the host, and without these turns the checks,
 * the decoding and the panels' posting would run in that same task (promise continuations); so
 * the longest stretch the host's thread is held stays the parse, or one kind's decoding.
 */
export async function toAttentionInTurns(wire: WireAttention, what: string): Promise<Attention> {
  const maps: AttentionMaps[] = [];
  for (const [i, m] of wire.maps.entries()) {
    await nextTurn();
    maps.push(mapsFromWire(m, `${what}.maps[${i}]`));
  }
  await nextTurn();
  return checkedAttention(wire, maps, what);
}

export function toPositionalPayload(wire: WireMatrix, what = 'positional'): PositionalPayload {
  const payload: PositionalPayload = { shape: wire.shape, values: base64ToFloat32(wire.data, `${what}.data`) };
  const why = checkPositionalPayload(payload, what);
  if (why) throw new Error(why);
  return payload;
}
