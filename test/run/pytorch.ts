/** Helpers of the tests that read run folders written by PyTorch (python/attention_debugger). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
import type { Transformer } from '../../src/engine/model/transformer';

export const KINDS = ['encoder_self', 'decoder_self', 'cross'] as const;
export type Kind = (typeof KINDS)[number];

/** One kind's maps for one pair, row-major [L, H, T_q, T_k]: the layout of a snapshot tensor. */
export interface FlatMaps {
  shape: number[];
  data: Float32Array;
}

/**
 * torchrun's options for two CPU processes on this machine. --redirects/--tee are not "0" (their
 * default) because Debian's torchrun (PyTorch 1.13 on Python 3.11) cannot parse "0": Python 3.11
 * leaves a Flag's zero member out of iteration, so Std.from_str('0') returns None.
 */
export const TORCHRUN_ARGS = ['--standalone', '--nproc_per_node', '2', '--redirects', '2', '--tee', '2'];

/** Debian's interpreter, the one with PyTorch; ATTENTION_DEBUGGER_PYTHON names another (a venv with PyTorch 2.x). */
export const PYTHON = process.env.ATTENTION_DEBUGGER_PYTHON ?? '/usr/bin/python3';

/** torchrun of that interpreter's PyTorch (/usr/bin/torchrun is this entry point of Debian's). */
export const TORCHRUN = [PYTHON, '-m', 'torch.distributed.run', ...TORCHRUN_ARGS];

/** Why Debian's PyTorch cannot run here, or undefined when it can. */
export function pytorchAvailable(): string | undefined {
  if (!existsSync(PYTHON)) return `${PYTHON} is missing: apt-get install python3-torch`;
  const r = spawnSync(PYTHON, ['-c', 'import torch.distributed.run'], { encoding: 'utf8' });
  if (r.status !== 0) return `${PYTHON} cannot import torch (apt-get install python3-torch):\n${r.stderr}`;
  return undefined;
}

/** The ids of a task vocabulary's labels (vocab.json {"kind": "task"}): <pad> <s> </s> <unk>, then numbers. */
export function idsOfLabels(labels: string[]): number[] {
  const special = ['<pad>', '<s>', '</s>', '<unk>'];
  return labels.map((l) => (special.includes(l) ? special.indexOf(l) : Number(l)));
}

/** The engine's attention for one pair, per kind, flat [L, H, T_q, T_k] (the protocol's own layout). */
export async function engineAttention(
  model: Transformer,
  src: number[],
  tgt: number[],
): Promise<Record<Kind, FlatMaps>> {
  const [pair] = await attentionOfPairs(model, [src], [tgt]);
  const out = {} as Record<Kind, FlatMaps>;
  for (const m of pair!.maps) out[m.kind] = { shape: [...m.shape], data: m.weights };
  return out;
}

/** Largest |a − b| over two arrays of one length. */
export function maxAbsDiffFlat(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
