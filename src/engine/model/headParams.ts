/**
 * The weights one attention head owns (§3.2.2): head h of an attention projects with rows
 * h·d_k … (h+1)·d_k of W^Q, W^K and W^V (stacked in in_proj_weight [3d, d]) and of their biases
 * (in_proj_bias [3d]), and W^O reads its output through the same columns of out_proj.weight
 * [d, d]. W^O's bias is shared by all heads and owned by none. Forks freeze, mask and re-initialise
 * heads through these element masks (run/fork.ts, train/step.ts).
 */
import { type AttentionKind, HEAD_ID_FORM, type HeadRef, parseHeadId } from '../../protocol/attention';
import type { TransformerConfig } from './config';
import type { AttentionParams, TransformerLayers } from './params';

/** The state_dict prefix of one attention: `decoder.layers.1.multihead_attn` for cross:1.*. */
export function attentionPrefix(kind: AttentionKind, layer: number): string {
  if (kind === 'encoder_self') return `encoder.layers.${layer}.self_attn`;
  return `decoder.layers.${layer}.${kind === 'cross' ? 'multihead_attn' : 'self_attn'}`;
}

/** The parameters of one attention: `layers.decoder[1].crossAttn` for cross:1.*. */
export function attentionParamsOf(layers: TransformerLayers, kind: AttentionKind, layer: number): AttentionParams {
  if (kind === 'encoder_self') return layers.encoder[layer]!.selfAttn;
  return kind === 'cross' ? layers.decoder[layer]!.crossAttn : layers.decoder[layer]!.selfAttn;
}

/** Layers of each kind of attention in a config. */
export function attentionLayers(c: TransformerConfig): Record<AttentionKind, number> {
  return { encoder_self: c.encoder_layers, decoder_self: c.decoder_layers, cross: c.decoder_layers };
}

/** Head ids (`cross:0.1`) checked against the config; errors name `field` and the id. */
export function checkHeadIds(c: TransformerConfig, ids: readonly string[], field: string): HeadRef[] {
  const layers = attentionLayers(c);
  return ids.map((id) => {
    const ref = parseHeadId(id);
    if (!ref) throw new RangeError(`${field}: ${JSON.stringify(id)} is not a head id like ${HEAD_ID_FORM}`);
    if (ref.layer >= layers[ref.kind] || ref.head >= c.heads)
      throw new RangeError(
        `${field}: ${id} does not exist: ${ref.kind} has layers 0–${layers[ref.kind] - 1} and heads 0–${c.heads - 1}`,
      );
    return ref;
  });
}

/**
 * Which parts of a head: `all` its W^Q, W^K, W^V rows, their biases and its W^O columns; `output`
 * only its W^O columns (zeroing those is ξ_h = 0, the head removed before W^O).
 */
export type HeadPart = 'all' | 'output';

/**
 * Per parameter name, a 0/1 mask of its elements (row-major, as the parameter's data) that the
 * heads own; only parameters some head touches appear.
 */
export function headElements(c: TransformerConfig, refs: readonly HeadRef[], part: HeadPart): Map<string, Uint8Array> {
  const d = c.d_model;
  const dk = d / c.heads;
  const out = new Map<string, Uint8Array>();
  const maskOf = (name: string, size: number): Uint8Array => {
    let m = out.get(name);
    if (!m) out.set(name, (m = new Uint8Array(size)));
    return m;
  };
  for (const { kind, layer, head } of refs) {
    const p = attentionPrefix(kind, layer);
    const first = head * dk;
    const wO = maskOf(`${p}.out_proj.weight`, d * d); // [d, d]: columns first … first + dk
    for (let r = 0; r < d; r++) wO.fill(1, r * d + first, r * d + first + dk);
    if (part === 'output') continue;
    const wQKV = maskOf(`${p}.in_proj_weight`, 3 * d * d); // [3d, d]: rows of Q, K and V
    const bQKV = maskOf(`${p}.in_proj_bias`, 3 * d); // [3d]
    for (let j = 0; j < 3; j++) {
      const row = j * d + first;
      wQKV.fill(1, row * d, (row + dk) * d);
      bQKV.fill(1, row, row + dk);
    }
  }
  return out;
}
