/**
 * A block of one pooled head for the attention page (`requestBlock` → attention/block): asked for
 * the selection's run, step and input, its base64 decoded and checked once here (protocol/wire.ts).
 */
import type { AttentionBlock, BlockRange } from '../protocol/attentionBlock';
import { attentionBlock } from '../protocol/methods';
import type { InputPair } from '../protocol/attention';
import { blockFromWire } from '../protocol/wire';
import type { EngineClient } from './engineClient';

export async function requestBlock(
  engine: EngineClient,
  sel: { runDir: string; step?: number; input: InputPair },
  r: BlockRange,
): Promise<AttentionBlock> {
  const { kind, layer, head, q0, q1, k0, k1 } = r;
  const wire = await engine.request(attentionBlock, {
    runDir: sel.runDir,
    input: sel.input,
    ...(sel.step !== undefined ? { step: sel.step } : {}),
    ...{ kind, layer, head, q0, q1, k0, k1 },
  });
  return blockFromWire(wire, 'attention/block result');
}
