/**
 * The Debug Console's and the Watch view's expressions over the newest telemetry row and metrics row:
 * a watch condition (src/engine/telemetry/watch.ts) answers true or false with the heads it holds
 * for; a head statistic or pattern (`cross:0.*.entropy`) lists each head's value; max, min or mean
 * of a pattern, or a metric, is a number.
 */
import { HEAD_STATS } from '../engine/telemetry/telemetry';
import { parseWatch, type Watch } from '../engine/telemetry/watch';
import { modelHeads } from './breakpoints';
import type { RunView } from './views';

type WatchMetrics = Parameters<Watch['evaluate']>[1];

/** The step's metrics as watch conditions name them (metrics.jsonl's names). */
function metricsOf(run: RunView): WatchMetrics {
  const m = run.metrics;
  return {
    step: run.step,
    ...(m ? { loss: m.loss, lr: m.lr, tokens_per_sec: m.tokensPerSec, grad_norm: m.gradNorm } : {}),
    ...(m?.valLoss !== undefined ? { val_loss: m.valLoss } : {}),
    ...(m?.valBleu !== undefined ? { val_bleu: m.valBleu } : {}),
  };
}

const PATTERN = /^([a-z_]+):(\d+|\*)\.(\d+|\*)\.([A-Za-z_]+)$/;
const FOLD = /^(max|min|mean)\((.+)\)$/;

/** The expression's value as the console shows it; throws with the parser's message when it means nothing. */
export function evaluate(run: RunView, expression: string): string {
  const text = expression.trim();
  const row = run.telemetry;
  const heads = run.model ? modelHeads(run.model) : (row?.heads ?? []);
  const metrics = metricsOf(run);
  if (text in metrics) return String(metrics[text as keyof WatchMetrics]);
  const fold = FOLD.exec(text);
  const pattern = PATTERN.exec(fold ? fold[2]!.trim() : text);
  if (pattern) {
    if (!row) return `no telemetry row yet (step ${run.step})`;
    const [, kind, layer, head, stat] = pattern as unknown as [string, string, string, string, string];
    if (!HEAD_STATS.includes(stat)) throw new Error(`no statistic "${stat}" (${HEAD_STATS.join(', ')})`);
    const values = row.heads.flatMap((id, k) => {
      const m = /^([a-z_]+):(\d+)\.(\d+)$/.exec(id);
      const hit = m && m[1] === kind && (layer === '*' || m[2] === layer) && (head === '*' || m[3] === head);
      return hit ? [{ id, x: row.stats[stat]?.[k] ?? null }] : [];
    });
    if (!values.length) throw new Error(`no head ${kind}:${layer}.${head} in this model (heads count from 0)`);
    if (!fold) return values.map((v) => `${v.id} ${v.x ?? 'none'}`).join(', ');
    const xs = values.flatMap((v) => (v.x === null ? [] : [v.x]));
    if (!xs.length) return 'none';
    const f = fold[1];
    return String(
      f === 'mean' ? xs.reduce((s, x) => s + x, 0) / xs.length : (f === 'max' ? Math.max : Math.min)(...xs),
    );
  }
  const watch = parseWatch(text, heads, HEAD_STATS);
  if (!row) return `no telemetry row yet (step ${run.step})`;
  const { hit, heads: which } = watch.evaluate(row, metrics);
  return hit && which.length ? `true (${which.join(', ')})` : String(hit);
}
