/**
 * Runs written by PyTorch and inputs that were silent (issue 27, items 6 and 7): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 */
import { type MalformedCase, train } from './malformed-plants';
import { pytorchRun } from './pytorch-plant';

/** What the engine says of a run PyTorch wrote that it is asked to train on or batch (run/pytorchRun.ts). */
const PYTORCH_REFUSED = '{case}/pt/config.json: written by PyTorch (writer "pytorch"): the engine cannot resume, fork';

export const SILENT_INPUTS: MalformedCase[] = [
  // 6. A run written by PyTorch (python/attention_debugger): read by every reader, refused with the reason by
  // what would train on it or write the engine's batches of it (its training section has no batch_tokens).
  ...[
    ['train --resume', train('--out', '{case}/pt', '--resume')],
    ['train --resume --steps 10', train('--out', '{case}/pt', '--resume', '--steps', '10')],
    ['train --fork RUN', train('--fork', '{case}/pt', '--out', '{case}/fork')],
    [
      'train --fork RUN@2 --freeze-heads',
      train('--fork', '{case}/pt@2', '--out', '{case}/fork', '--freeze-heads', 'cross:0.1'),
    ],
    ['batches', ['batches', '--run', '{case}/pt', '--out', '{case}/batches.bin', '--steps', '2']],
  ].map(
    ([what, args]): MalformedCase => ({
      name: `${what as string} on a run written by PyTorch`,
      issue: 27,
      item: 6,
      args: args as string[],
      files: { pt: pytorchRun },
      code: 1,
      error: PYTORCH_REFUSED,
    }),
  ),
];
