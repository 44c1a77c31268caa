/**
 * A logged training step and the planned learning-rate curve, as both wires carry them (the
 * engine's metrics.jsonl rows renamed to camelCase once, in the engine's server).
 */
import { type Check, isFiniteNumber, object, optional } from './check';

/** One logged training step (a line of metrics.jsonl). */
export interface MetricRow {
  step: number;
  loss: number;
  lr: number;
  tokensPerSec: number;
  gradNorm: number;
  valLoss?: number;
  valBleu?: number;
}

/** The columns of a metrics row, in the order exports write them. */
export const METRIC_COLUMNS = ['step', 'loss', 'lr', 'tokensPerSec', 'gradNorm', 'valLoss', 'valBleu'] as const;

export const checkMetricRow: Check<MetricRow> = object({
  step: isFiniteNumber,
  loss: isFiniteNumber,
  lr: isFiniteNumber,
  tokensPerSec: isFiniteNumber,
  gradNorm: isFiniteNumber,
  valLoss: optional(isFiniteNumber),
  valBleu: optional(isFiniteNumber),
});

/** One point of the planned learning-rate curve (eq. 3 sampled over the whole run). */
export interface SchedulePoint {
  step: number;
  lr: number;
}

export const checkSchedulePoint: Check<SchedulePoint> = object({ step: isFiniteNumber, lr: isFiniteNumber });
