/**
 * What a run says when the GPU fails its work (backend/webgpu/errors.ts): which work, the model and
 * batch that asked for the memory, what the GPU had, that nothing of the failed work was kept, and
 * how to go on. The CLI's `train` exits with GPU_FAILED_EXIT; the server's train/ended carries it.
 */
import { PRESETS } from '../model/config';
import type { TransformerConfig } from '../model/config';
import { type GpuError, gpuMemory } from '../backend/webgpu/errors';
import { gib } from '../run/memory';
import type { TrainingSettings } from '../run/settings';

/** `train`'s exit code when the GPU failed a step (0 done, 1 error, 2 usage, 3 breakpoint). */
export const GPU_FAILED_EXIT = 4;

/** A run stopped by a GpuError; its message says what to do. */
export class GpuTrainingFailure extends Error {
  constructor(
    readonly gpu: GpuError,
    message: string,
  ) {
    super(message);
    this.name = 'GpuTrainingFailure';
  }
}

/** The preset the model has the shape of, and the shape. */
export function describeModel(c: TransformerConfig): string {
  const shape = `d_model ${c.d_model}, ${c.heads} heads, d_ff ${c.d_ff}, ${c.encoder_layers}+${c.decoder_layers} layers`;
  const preset = Object.entries(PRESETS).find(
    ([, p]) =>
      p.d_model === c.d_model &&
      p.heads === c.heads &&
      p.d_ff === c.d_ff &&
      p.encoder_layers === c.encoder_layers &&
      p.decoder_layers === c.decoder_layers,
  )?.[0];
  return preset ? `config ${preset} (${shape})` : `config ${shape}`;
}

export interface FailureContext {
  runPath: string;
  config: TransformerConfig;
  settings: TrainingSettings;
  /** The newest checkpoint's step, where a resume goes on from. */
  checkpoint: number | undefined;
  /** The adapter in words (gpuProbe.ts describeAdapter). */
  adapter: string;
}

export function gpuFailure(err: GpuError, ctx: FailureContext): GpuTrainingFailure {
  const s = ctx.settings;
  const n = s.accumulate ?? 1;
  const memory = gpuMemory();
  const resume = `train --out ${ctx.runPath} --resume`;
  const from =
    ctx.checkpoint === undefined
      ? 'it starts again from step 0'
      : `it goes on from its checkpoint of step ${ctx.checkpoint}`;
  const lines = [
    `training stopped: ${err.message}.`,
    `It was training ${describeModel(ctx.config)} on batches of batch_tokens ${s.batch_tokens} ` +
      `(${n === 1 ? 'one micro-batch' : `${n} micro-batches`} a step).`,
    `GPU memory: the engine had asked for ${memory ? gib(memory.allocated) : 'an unknown amount'} of GPU buffers; ` +
      `the adapter is ${ctx.adapter} (WebGPU does not tell its memory size` +
      `${memory ? `; one buffer may hold at most ${gib(memory.maxBufferSize)}` : ''}).`,
    `Nothing of the failed work was applied or written: the run is resumable (${resume}; ${from}).`,
  ];
  if (err.kind === 'device-lost')
    lines.push(
      'The engine cannot go on with webgpu once its device is lost: run it again (in VS Code, restart the engine), ' +
        `or resume on the CPU with ${resume} --backend wasm.`,
    );
  else if (err.kind === 'out-of-memory' || err.kind === 'validation')
    lines.push(
      `To fit: resume with ${resume} --accumulate ${2 * n} (the same ${s.batch_tokens} tokens a step, in micro-batches ` +
        `of about ${Math.round(s.batch_tokens / (2 * n))}: about half the activation memory), or start a new run ` +
        `with --batch-tokens ${Math.max(1, Math.floor(s.batch_tokens / 2))}.`,
    );
  if (err.kind === 'internal' || err.kind === 'validation')
    lines.push(`If it happens again, go on with --backend wasm and report it, with the message above.`);
  return new GpuTrainingFailure(err, lines.join('\n'));
}
