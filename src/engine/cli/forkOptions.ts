/** `train --fork PARENT[@STEP]` and the changes a fork takes (issue 13; run/fork.ts makes the folder). */
import { existsSync } from 'node:fs';
import { parseHeadList } from '../../protocol/ablation';
import { FORK_SETTINGS, type ForkChanges, type ForkSpec } from '../run/fork';
import type { TrainingSettings } from '../run/settings';
import { type OptionSpec, type Parsed, UsageError } from './args';

export const FORK_SPECS: Record<string, OptionSpec> = {
  fork: {
    type: 'string',
    help: 'start a new run (--out) from RUN@STEP: that checkpoint’s weights, optimizer and step (newest without @STEP)',
  },
  'freeze-heads': {
    type: 'string',
    help: 'with --fork: heads that get no updates, e.g. cross:0.1,encoder_self:2.0 (kind:layer.head, from 0)',
  },
  'mask-heads': { type: 'string', help: 'with --fork: heads removed before W^O (ξ = 0) throughout training' },
  'reinit-heads': { type: 'string', help: 'with --fork: heads whose weights are drawn afresh' },
  dropout: { type: 'string', help: 'with --fork: the fork’s dropout rate' },
};

/** Options a fork takes from its parent, and so refuses. */
const FROM_PARENT = ['task', 'data', 'gettext', 'src-lang', 'tgt-lang', 'config', 'resume', 'vocab-size'];
/** Head lists: "cross:0.1, decoder_self:0.2" → ids, none empty or twice (checked against the model by run/fork.ts). */
function heads(value: string | boolean | undefined, flag: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value.trim()) throw new UsageError(`--${flag} needs heads, e.g. cross:0.1`);
  try {
    return parseHeadList(value, `--${flag}`);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * The fork the options ask for, with the training settings they change (`overrides`, parsed from
 * the numeric flags `numericFlags` and --break-on); undefined without --fork. Options that only a
 * fork takes are refused without it.
 */
export function forkOption(
  options: Parsed['options'],
  numericFlags: Record<string, string>,
  overrides: Partial<TrainingSettings>,
): ForkSpec | undefined {
  const only = ['freeze-heads', 'mask-heads', 'reinit-heads', 'dropout'].find((k) => options[k] !== undefined);
  if (options.fork === undefined) {
    if (only) throw new UsageError(`train: --${only} changes a fork: give --fork PARENT_RUN[@STEP] too`);
    return undefined;
  }
  const fromParent = FROM_PARENT.find((k) => options[k] !== undefined);
  if (fromParent)
    throw new UsageError(`train --fork: --${fromParent} comes from the parent run's config.json; leave it out`);
  // The numeric flags a fork may change: those of the settings run/fork.ts lets a fork change.
  const allowed = Object.keys(numericFlags).filter((k) => FORK_SETTINGS.includes(numericFlags[k]!));
  const numericFlag = Object.keys(numericFlags).find((k) => options[k] !== undefined && !allowed.includes(k));
  if (numericFlag)
    throw new UsageError(
      `train --fork: --${numericFlag} is fixed by the parent run (its data and checkpoints depend on it); ` +
        `a fork may change --${allowed.join(', --')}, the heads and --dropout`,
    );
  const text = String(options.fork);
  const m = /^(.*)@(\d+)$/.exec(text);
  const at = /^(.+)@([^@/]*)$/.exec(text);
  if (!m && at && !existsSync(text))
    throw new UsageError(
      `--fork ${text}: "${at[2]}" after @ is not a step; give ${at[1]}@STEP with a whole number ` +
        `(e.g. ${at[1]}@100), or ${at[1]} alone for its newest checkpoint`,
    );
  const dropout = options.dropout === undefined ? undefined : Number(options.dropout);
  if (dropout !== undefined && !(dropout >= 0 && dropout < 1))
    throw new UsageError(`--dropout: expected a number in [0, 1), got "${options.dropout}"`);
  const changes: ForkChanges = {
    ...overrides,
    ...(dropout !== undefined ? { dropout } : {}),
  };
  for (const [flag, key] of [
    ['freeze-heads', 'freeze_heads'],
    ['mask-heads', 'mask_heads'],
    ['reinit-heads', 'reinit_heads'],
  ] as const) {
    const ids = heads(options[flag], flag);
    if (ids) changes[key] = ids;
  }
  return { parent: m ? m[1]! : text, ...(m ? { step: Number(m[2]) } : {}), out: String(options.out), changes };
}
