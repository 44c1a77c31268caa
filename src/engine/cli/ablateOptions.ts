/** `--ablate` and `--ablate-mode`, taken by attention, decode and evaluate (issue 13). */
import { ABLATION_MODES, type Ablation, type AblationMode, parseAblateList } from '../../protocol/ablation';
import { type AblationGates, ablationGates } from '../ablate/gates';
import type { Transformer } from '../model/transformer';
import { probeBatchOf } from '../run/probe';
import { type OptionSpec, type Parsed, UsageError } from './args';

export const ABLATION_SPECS: Record<string, OptionSpec> = {
  ablate: { type: 'string', help: 'heads to ablate, e.g. cross:0.1,encoder_self:2.0 (kind:layer.head, from 0)' },
  'ablate-mode': {
    type: 'string',
    help: 'zero (remove the heads’ output, default) | mean (their mean output over the run’s probe batch)',
  },
};

/** The ablation the options ask for; undefined without --ablate. Mean ablation needs a run folder. */
export function ablationOption(options: Parsed['options'], runDir: string | undefined): Ablation | undefined {
  const mode = (options['ablate-mode'] ?? 'zero') as string;
  if (!ABLATION_MODES.includes(mode as AblationMode))
    throw new UsageError(`--ablate-mode must be one of ${ABLATION_MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  if (options.ablate === undefined) {
    if (options['ablate-mode'] !== undefined) throw new UsageError('--ablate-mode needs --ablate HEADS');
    return undefined;
  }
  if (typeof options.ablate !== 'string') throw new UsageError('--ablate needs a list of heads, e.g. cross:0.1');
  let heads: string[];
  try {
    heads = parseAblateList(options.ablate);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (mode === 'mean' && !runDir)
    throw new UsageError('--ablate-mode mean averages head outputs over a run’s probe batch: give --run RUN');
  return { heads, mode: mode as AblationMode };
}

/** The gates --ablate asks for on this model (mean ablation averages over the run's probe batch); undefined without --ablate. */
export function ablationGatesOption(
  options: Parsed['options'],
  model: Transformer,
  runDir: string | undefined,
): { ablation: Ablation; gates: AblationGates } | undefined {
  const ablation = ablationOption(options, runDir);
  if (!ablation) return undefined;
  const meanOver = ablation.mode === 'mean' ? probeBatchOf(runDir!) : undefined;
  return { ablation, gates: ablationGates(model, ablation, meanOver) };
}
