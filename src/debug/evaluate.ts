/**
 * The Debug Console's and the Watch view's expressions over the newest telemetry row and metrics row:
 * any expression of the watch language (src/engine/telemetry/watch.ts, its own parser): a condition
 * answers true or false with the heads it holds for; a head statistic or pattern (`cross:0.*.entropy`)
 * lists each head's value; max, min or mean of a pattern, a metric, or arithmetic on them is a number.
 */
import type { MetricRow } from '../protocol/metrics';
import { HEAD_STATS } from '../engine/telemetry/telemetry';
import { parseExpression, type Value, type Watch } from '../engine/telemetry/watch';
import { modelHeads } from './breakpoints';
import type { RunView } from './views';

type WatchMetrics = Parameters<Watch['evaluate']>[1];

/** A step's metrics as watch conditions name them (metrics.jsonl's names). */
export function watchMetrics(step: number, m: MetricRow | undefined): WatchMetrics {
  return {
    step,
    ...(m ? { loss: m.loss, lr: m.lr, tokens_per_sec: m.tokensPerSec, grad_norm: m.gradNorm } : {}),
    ...(m?.valLoss !== undefined ? { val_loss: m.valLoss } : {}),
    ...(m?.valBleu !== undefined ? { val_bleu: m.valBleu } : {}),
  };
}

/** A value as the console shows it. */
function shown(v: Value): string {
  if (v.t === 'num') return v.v === null ? 'none' : String(v.v);
  if (v.t === 'heads') return [...v.v].map(([id, x]) => `${id} ${x ?? 'none'}`).join(', ');
  return v.v && v.heads.length ? `true (${v.heads.join(', ')})` : String(v.v);
}

/** The expression's value as the console shows it; throws with the parser's message when it means nothing. */
export function evaluate(run: RunView, expression: string): string {
  const row = run.telemetry;
  const heads = run.model ? modelHeads(run.model) : (row?.heads ?? []);
  const e = parseExpression(expression.trim(), heads, HEAD_STATS);
  if (!row && e.source.includes(':')) return `no telemetry row yet (step ${run.step})`; // it names heads
  return shown(e.value(row ?? { step: run.step, pairs: 0, heads: [], stats: {} }, watchMetrics(run.step, run.metrics)));
}
