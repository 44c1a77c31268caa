/**
 * The payloads of the inspection requests (methods.ts: attention/get, snapshots/get, beam/tree,
 * positional): what a view asks of a run's checkpoints, which never touch its training.
 * Attention travels as WireAttention (wire.ts: base64 weights); the extension decodes it once.
 */
import { checkInputPair, type InputPair } from './attention';
import { EARLY_STOPS, type EarlyStop, MAX_BEAM } from './beamTree';
import {
  type Check,
  arrayOf,
  intIn,
  isAbsolutePath,
  isBoolean,
  isFiniteNumber,
  isIndex,
  numberIn,
  object,
  oneOf,
  optional,
} from './check';
import { checkDecoded, type Decoded } from './decoded';
import { checkWireAttention, checkWireMatrix, type WireAttention, type WireMatrix } from './wire';

// ---- attention/get ---------------------------------------------------------------------------

/** Attention of a sentence pair at a checkpoint of a run (computed by the engine, training untouched). */
export interface AttentionParams {
  /** A run folder, or a checkpoint folder (config.json and model.safetensors) written by PyTorch. */
  runDir: string;
  /** The checkpoint's step (checkpoints/step-N.safetensors); the newest when absent. */
  step?: number;
  input: InputPair;
  /** Beam size when the target is decoded (no target given); 1 decodes greedily. Default 4. */
  beam?: number;
  /**
   * Each map also holds value-weighted attention, ‖α_ij · v_j W^O_h‖ (attention.ts AttentionMaps
   * `valueWeighted`). Refused for inputs past 256 tokens a side (their maps are pooled). Default false.
   */
  valueWeighted?: boolean;
}
export const checkAttentionParams: Check<AttentionParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  input: checkInputPair,
  beam: optional(intIn(1, MAX_BEAM)),
  valueWeighted: optional(isBoolean),
});

export interface AttentionResult {
  attention: WireAttention;
  /** The decoded target, when the input gave none. */
  decoded?: Decoded;
  /** log p of each target token after BOS, and of EOS last (teacher-forced). */
  tokenLogProbs: number[];
}
export const checkAttentionResult: Check<AttentionResult> = object({
  attention: checkWireAttention,
  decoded: optional(checkDecoded),
  tokenLogProbs: arrayOf(isFiniteNumber),
});

// ---- snapshots/get ---------------------------------------------------------------------------

/** The probe sentence's attention at these snapshot steps (every one when absent). */
export interface SnapshotsParams {
  runDir: string;
  steps?: number[];
}
export const checkSnapshotsParams: Check<SnapshotsParams> = object({
  runDir: isAbsolutePath,
  steps: optional(arrayOf(isIndex)),
});

// ---- beam/tree -------------------------------------------------------------------------------

/** A sentence's beam search at a checkpoint, with its whole search tree (the Beam Tree panel). */
export interface BeamTreeParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** The source: text, or ids for a run without vocab.json (a target, if given, is ignored). */
  input: InputPair;
  /** Beam size k, default 4. */
  beam?: number;
  /** Length-penalty exponent α, default 0.6. */
  alpha?: number;
  earlyStop?: EarlyStop;
}
export const checkBeamTreeParams: Check<BeamTreeParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  input: checkInputPair,
  beam: optional(intIn(1, MAX_BEAM)),
  alpha: optional(numberIn(0, 10)),
  earlyStop: optional(oneOf(EARLY_STOPS)),
});

// ---- positional ------------------------------------------------------------------------------

/** The positional encoding of a run (learned rows) or the sinusoid for d_model × positions. */
export interface PositionalParams {
  runDir?: string;
  dModel?: number;
  positions?: number;
}
/** The largest encoding `positional` draws: its width, its length, and their product (4 M values, 16 MB). */
export const POSITIONAL_LIMITS = { dModel: 8192, positions: 16384, values: 1 << 22 };

function positionalSize(p: PositionalParams, path: string): string | undefined {
  const values = (p.dModel ?? 512) * (p.positions ?? 128);
  return values > POSITIONAL_LIMITS.values
    ? `${path}: positions × dModel is ${values.toLocaleString('en-US')} values, more than the ` +
        `${POSITIONAL_LIMITS.values.toLocaleString('en-US')} a view can show; ask for fewer positions`
    : undefined;
}

export const checkPositionalParams: Check<PositionalParams> = (v, path) =>
  object<PositionalParams>({
    runDir: optional(isAbsolutePath),
    dModel: optional(intIn(2, POSITIONAL_LIMITS.dModel)),
    positions: optional(intIn(1, POSITIONAL_LIMITS.positions)),
  })(v, path) ?? positionalSize(v as PositionalParams, path);

/** The encoding as rows × columns of base64 float32, and whether the run learned it. */
export type Positional = WireMatrix & { learned: boolean };
export const checkPositional: Check<Positional> = (v, path) =>
  checkWireMatrix(v, path) ?? object<{ learned: boolean }>({ learned: isBoolean })(v, path);
