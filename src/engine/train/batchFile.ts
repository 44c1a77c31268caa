/**
 * The batches a run trains and validates on, as the trainer makes them (trainingStream and
 * validationBatches are what Trainer itself calls), and a file of them for a peer that must train
 * on the very same token ids in the same order (bench/equal-time.mjs; reader: bench/batch_file.py).
 *
 * Format (every field a little-endian int32; bench/README.md "A better model in the same minutes"):
 *   header  "ADBF" (0x46424441), version 1, M validation batches, N training batches
 *   M validation records, then N training records, each:
 *           rows B, source width S, target width T, src [B·S], tgt_in [B·T], tgt_out [B·T] (row-major)
 * Why int32 and not JSONL: the ids are the int32 tensors the step builds (tf.tensor2d(…, 'int32')), and a
 * record is one read and one reshape on the peer's side (torch.frombuffer), with no text to parse for
 * each of the thousands of steps; the size is JSON's give or take (a 2,500-token gettext batch: 15.4 kB,
 * 16.0 kB as compact JSON), and the header says how many records follow. The three matrices are stored as the
 * trainer feeds them (padding, BOS and EOS in place), so the peer derives nothing. Validation comes
 * first so that a reader has it before the training records, which it can stream.
 */
import { endianness } from 'node:os';
import { type Batch, BatchStream } from '../data/batchStream';
import type { PreparedData } from '../data/dataset';
import type { TrainingSettings } from '../run/settings';
import { writeFileAtomic } from '../io/atomicFile';

export const BATCH_FILE_MAGIC = 0x46424441; // "ADBF" as little-endian bytes
export const BATCH_FILE_VERSION = 1;

/** The stream of training batches a run's trainer takes its steps from (§5.1: token-budget batches). */
export function trainingStream(data: PreparedData, settings: TrainingSettings): BatchStream {
  return new BatchStream(data.train, settings.batch_tokens, settings.seed);
}

/** The batches the trainer's validation loss runs over, in order. */
export function validationBatches(data: PreparedData, settings: TrainingSettings): Batch[] {
  return BatchStream.evaluationBatches(data.valid, settings.batch_tokens);
}

/** The first `steps` training batches of a new run, in the order its steps 1, 2, … take them. */
export function* firstTrainingBatches(stream: BatchStream, steps: number): Generator<Batch> {
  let position = { epoch: 0, batch: 0 };
  for (let i = 0; i < steps; i++) {
    const { batch, next } = stream.at(position);
    yield batch;
    position = next;
  }
}

/** One record: [B, S, T, src…, tgt_in…, tgt_out…]. */
function encodeBatch(b: Batch): Int32Array {
  const rows = b.src.length;
  const s = b.src[0]?.length ?? 0;
  const t = b.tgtIn[0]?.length ?? 0;
  const out = new Int32Array(3 + rows * (s + 2 * t));
  out.set([rows, s, t]);
  let at = 3;
  for (const [matrix, width] of [
    [b.src, s],
    [b.tgtIn, t],
    [b.tgtOut, t],
  ] as const) {
    if (matrix.length !== rows) throw new Error(`batch file: ${matrix.length} rows where the source has ${rows}`);
    for (const row of matrix) {
      if (row.length !== width) throw new Error(`batch file: a row of ${row.length} ids in a batch ${width} wide`);
      out.set(row, at);
      at += width;
    }
  }
  return out;
}

/**
 * Writes the validation batches and `steps` training batches to `path` (format above), whole or not
 * at all (io/atomicFile.ts); returns the number of bytes written.
 */
export function writeBatchFile(
  path: string,
  validation: readonly Batch[],
  training: Iterable<Batch>,
  steps: number,
): number {
  if (endianness() !== 'LE') throw new Error('batch file: written little-endian, this machine is big-endian');
  const records: Int32Array[] = [Int32Array.of(BATCH_FILE_MAGIC, BATCH_FILE_VERSION, validation.length, steps)];
  for (const b of validation) records.push(encodeBatch(b));
  let n = 0;
  if (steps > 0)
    for (const b of training) {
      records.push(encodeBatch(b));
      if (++n === steps) break;
    }
  if (n < steps) throw new Error(`batch file: ${steps} training batches announced, ${n} given`);
  const chunks = records.map((w) => new Uint8Array(w.buffer, w.byteOffset, w.byteLength));
  writeFileAtomic(path, chunks);
  return chunks.reduce((bytes, c) => bytes + c.byteLength, 0);
}

/** A run's validation batches and its first `steps` training batches, written to `path`. */
export function writeRunBatches(
  data: PreparedData,
  settings: TrainingSettings,
  steps: number,
  path: string,
): { bytes: number; validation: number } {
  const validation = validationBatches(data, settings);
  const bytes = writeBatchFile(path, validation, firstTrainingBatches(trainingStream(data, settings), steps), steps);
  return { bytes, validation: validation.length };
}
