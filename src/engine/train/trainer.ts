/**
 * The training loop of §5: batches by token budget, Adam at the scheduled rate, label smoothing,
 * periodic validation, checkpoints and attention snapshots of a fixed probe sentence. It reports
 * through callbacks (the seam to the CLI's progress bar and the extension's panels) and stops
 * cleanly, after a consistent checkpoint, when asked.
 */
import * as tf from '@tensorflow/tfjs-core';
import { probesOf } from '../run/probe';
import { locateNonFinite } from '../telemetry/nonfinite';
import { namedVariables } from '../model/params';
import { existsSync } from 'node:fs';
import { checkFinite, tensorsOf, paramsFromTensors } from '../checkpoint';
import { readSafetensors } from '../checkpoint/safetensors';
import type { Attention } from '../../protocol/attention';
import { attentionOfPairs } from '../inspect/attentionOfPairs';
import type { Transformer } from '../model/transformer';
import { decoderInput } from '../data/specialTokens';
import { taskAlignment } from '../data/tasks';
import { createOptimizer, type Optimizer } from './optimizer';
import type { Batch, BatchStream } from '../data/batchStream';
import type { IdPair, PreparedData } from '../data/dataset';
import { type BleuEvaluator, validationLoss } from './evaluate';
import type { DataPosition, MetricsRow, RunDir } from '../run/runDir';
import { transformerLr } from './schedule';
import { checkMode, telemetryEvery, type TrainingSettings } from '../run/settings';
import type { CheckName, Finding, RunEvent, TelemetryRow } from '../../protocol/telemetry';
import { HealthMonitor } from '../telemetry/checks';
import { headOutputNorms, headWeightNorms } from '../telemetry/heads';
import { maskLeak, paddingLeak } from '../telemetry/probes';
import { HEAD_STATS, headIds, headNormStats, telemetryRow } from '../telemetry/telemetry';
import { parseWatches, type Watch, watchFindings } from '../telemetry/watch';
import { layersOf } from '../telemetry/importance';
import { type StepResult, trainStep } from './step';
import { trainingStream, validationBatches } from './batchFile';
import { heldHeadsMask } from './heldHeads';
import { GpuError, gpuAdapterInWords, guardGpu } from '../backend/webgpu/errors';
import { gpuFailure } from './gpuFailure';

export interface TrainerCallbacks {
  /** The batch that step `step` (from 1) is about to train on, as the step gets it. */
  onBatch?(step: number, batch: Batch): void;
  onStep?(row: MetricsRow): void;
  /** The probe pair's attention, just written to snapshots/. */
  onSnapshot?(attention: Attention): void;
  /** Per-head statistics of the probe batch, just appended to telemetry.jsonl. */
  onTelemetry?(row: TelemetryRow): void;
  /** A health check fired (appended to events.jsonl); a breakpoint pauses the run after this. */
  onFinding?(event: RunEvent): void;
}

/** Runs `read`; an error it throws gets `advice` (what to do next) appended. */
function withAdvice<T>(read: () => T, advice: string): T {
  try {
    return read();
  } catch (err) {
    throw new Error(`${(err as Error).message}\nTo go on: ${advice}.`);
  }
}

/** Mask and padding probes run at every this-many telemetry rows. */
const PROBE_EVERY = 4;

export class Trainer {
  private step = 0;
  private position: DataPosition = { epoch: 0, batch: 0 };
  private stopRequested = false;
  private readonly stream: BatchStream;
  private readonly probe: IdPair | undefined;
  /** The held-out pairs telemetry averages over. */
  private readonly probeBatch: IdPair[];
  private readonly monitor = new HealthMonitor();
  private telemetryRows = 0;
  /** 1/0 per element of each variable a frozen or masked head owns (heldHeads.ts); empty for most runs. */
  private readonly gradMask: Map<tf.Variable, tf.Tensor>;
  /** The run's watch conditions (training.watch), parsed against this model's heads. */
  private readonly watches: Watch[];
  /** What resume() had to warn about (a checkpoint without its optimizer file). */
  readonly warnings: string[] = [];
  /** The finding that paused the run (a breakpoint), if one did. */
  breakpoint: RunEvent | undefined;
  /** The divergence check's finding, if it fired in this train(): the run ends `diverged`. */
  diverged: RunEvent | undefined;
  /** The run folder's lock (run/lock.ts), released by dispose(). */
  lock: { release(): void } | undefined;
  /** Added to each step's dropout seed: always 0 but in the test that shows a replay with other masks is caught (replay.ts). */
  dropoutSalt = 0;

  constructor(
    readonly run: RunDir,
    readonly model: Transformer,
    readonly settings: TrainingSettings,
    readonly data: PreparedData,
    private readonly bleu?: BleuEvaluator,
    private readonly optimizer: Optimizer = createOptimizer(),
  ) {
    this.stream = trainingStream(data, settings);
    const probes = probesOf(data, settings);
    this.probe = probes.pair;
    this.probeBatch = probes.batch;
    this.gradMask = heldHeadsMask(model, settings);
    this.watches = parseWatches(settings.watch ?? [], headIds(layersOf(model), model.config.heads), HEAD_STATS);
  }

  /**
   * Restores model, optimizer, step and data position from the newest checkpoint. Its weights must
   * read whole, match the model and be finite; without its optimizer file the run goes on from those
   * weights with fresh optimizer moments (and a warning in `warnings`), while a broken optimizer file
   * is refused, saying how to go on. Nothing in the folder changes until all of that is read and
   * checked; then what dead writers left is removed and the metrics past the checkpoint are dropped
   * (those steps are trained again). Without any checkpoint the run starts over at step 0.
   */
  resume(): number {
    const step = this.run.newestCheckpointStep();
    if (step === undefined) {
      this.run.removeTornWrites();
      this.run.truncateMetrics(0); // killed before its first checkpoint: nothing saved to go on from
      return 0;
    }
    const weightsPath = this.run.weightsPath(step);
    const loaded = withAdvice(() => {
      const { tensors } = readSafetensors(weightsPath);
      checkFinite(tensors, weightsPath);
      return paramsFromTensors(this.model.config, tensors, weightsPath);
    }, `move ${weightsPath} (and its .optim file) aside to resume from the checkpoint before it`);
    for (const [name, v] of this.model.params) v.assign(loaded.get(name)!);
    for (const v of new Set(loaded.values())) v.dispose();
    const optimPath = this.run.optimPath(step);
    if (existsSync(optimPath)) {
      this.position = withAdvice(
        () => this.restoreOptimizer(step, optimPath),
        `delete ${optimPath} to resume from step ${step} with fresh optimizer moments`,
      );
    } else {
      // Adam's step stays the run's: with zero moments its bias correction makes the first updates
      // smaller, not larger, while the moments fill again.
      this.optimizer.step = step;
      this.position = this.stream.positionAfter(step);
      this.warnings.push(
        `${optimPath} is missing: resuming from the weights of step ${step} with fresh optimizer moments ` +
          "(Adam's m and v start again from zero); the data continues where step " +
          `${step} left it`,
      );
    }
    this.step = step;
    this.run.removeTornWrites(); // what a writer killed mid-write left
    this.run.truncateMetrics(step);
    return step;
  }

  /** Restores Adam from an optimizer file and returns the data position it records. */
  private restoreOptimizer(step: number, optimPath: string): DataPosition {
    const optim = readSafetensors(optimPath);
    checkFinite(optim.tensors, optimPath);
    const position = (key: 'epoch' | 'batch'): number | undefined => {
      const value = optim.metadata[key];
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value))
        throw new Error(`${optimPath}: __metadata__.${key}: expected a whole number ≥ 0, got "${value}"`);
      return Number(value);
    };
    const [epoch, batch] = [position('epoch'), position('batch')];
    this.optimizer.restore(namedVariables(this.model.params), step, optim.tensors, optimPath);
    return epoch === undefined || batch === undefined ? this.stream.positionAfter(step) : { epoch, batch };
  }

  get currentStep(): number {
    return this.step;
  }

  /** Ends the loop after the step in progress, with a checkpoint. */
  stop(): void {
    this.stopRequested = true;
  }

  lr(step: number): number {
    return transformerLr(step, {
      dModel: this.model.config.d_model,
      warmupSteps: this.settings.warmup,
      factor: this.settings.lr_factor,
    });
  }

  async checkpoint(): Promise<void> {
    // Read whole from the GPU before anything is written: a read the GPU failed writes no checkpoint.
    const [weights, optim] = await guardGpu(`the checkpoint of step ${this.step}`, async () => [
      await tensorsOf(this.model.params),
      await this.optimizer.state(namedVariables(this.model.params)),
    ]);
    this.run.writeCheckpoint(this.step, weights, optim, this.position);
  }

  /** The probe pair's attention at this step (written to snapshots/ by writeSnapshot). */
  async snapshot(): Promise<Attention | undefined> {
    if (!this.probe) return undefined;
    const tgtIn = decoderInput(this.probe.tgt);
    const [pair] = await guardGpu(`the probe's attention at step ${this.step}`, () =>
      attentionOfPairs(this.model, [this.probe!.src], [tgtIn]),
    );
    return {
      source: { runDir: this.run.path, step: this.step, input: 'probe' },
      srcTokens: this.data.vocab.tokens(this.probe.src),
      tgtTokens: this.data.vocab.tokens(tgtIn),
      maps: pair.maps,
    };
  }

  /** Writes a snapshot of snapshot() to snapshots/ (whole, with its fsync), the probe's ids beside its tokens. */
  private writeSnapshot(snap: Attention): void {
    const probe = this.probe!;
    const pair = { src: snap.srcTokens, tgt: snap.tgtTokens, maps: snap.maps };
    const ids = { srcIds: probe.src, tgtIds: decoderInput(probe.tgt) };
    this.run.writeSnapshot({ step: snap.source.step, pairs: [{ ...pair, ...ids }] });
  }

  /**
   * Telemetry of the probe batch at this step (and, every PROBE_EVERY rows, the mask probes), and the
   * watch conditions that hold over it and the step's metrics.
   */
  private async telemetry(
    norms: Pick<StepResult, 'headGradNorms' | 'headMatrixGradNorms'>,
    metrics: MetricsRow,
    callbacks: TrainerCallbacks,
  ): Promise<Finding[]> {
    const src = this.probeBatch.map((p) => p.src);
    const tgt = this.probeBatch.map((p) => decoderInput(p.tgt));
    const [pairs, outputs, weights] = await guardGpu(`telemetry at step ${this.step}`, async () => [
      await attentionOfPairs(this.model, src, tgt),
      await headOutputNorms(this.model, src, tgt),
      await headWeightNorms(this.model),
    ]);
    const task = this.data.task; // a built-in task: its alignment of each pair (src without EOS) for align_err
    const aligned = task ? pairs.map((p, i) => ({ ...p, align: taskAlignment(task, src[i]!.slice(0, -1)) })) : pairs;
    const row = telemetryRow(this.step, aligned, headNormStats(norms, outputs, weights));
    this.run.appendTelemetry(row);
    callbacks.onTelemetry?.(row);
    const findings = [...this.monitor.onTelemetry(row), ...watchFindings(this.watches, row, metrics)];
    if (this.telemetryRows++ % PROBE_EVERY === 0) {
      const modes = (c: CheckName) => checkMode(this.settings, c) !== 'off';
      const probes = async (): Promise<Finding[]> => [
        ...(modes('mask_leak') ? await maskLeak(this.model, this.step, src[0]!, tgt[0]!) : []),
        ...(modes('padding_leak') && src.length > 1
          ? await paddingLeak(this.model, this.step, src.slice(0, 2), tgt.slice(0, 2))
          : []),
      ];
      findings.push(...(await guardGpu(`the mask probes at step ${this.step}`, probes)));
    }
    return findings;
  }

  /** Writes and reports findings the run's settings keep; true when one is a breakpoint. */
  private report(findings: Finding[], callbacks: TrainerCallbacks): boolean {
    let pause = false;
    for (const f of findings) {
      const mode = checkMode(this.settings, f.check);
      if (mode === 'off') continue;
      const event: RunEvent = { ...f, severity: mode === 'break' ? 'breakpoint' : 'warning' };
      this.run.appendEvent(event);
      callbacks.onFinding?.(event);
      if (f.check === 'divergence') {
        // a diverged run does not pause (resuming it at the same rate diverges again): as a
        // breakpoint it ends here, with a checkpoint; as a warning it trains on; both end `diverged`
        this.diverged = event;
        if (mode === 'break') this.stop();
      } else if (mode === 'break' && !pause) {
        this.breakpoint = event;
        pause = true;
      }
    }
    return pause;
  }

  /** Validation loss (and BLEU when an evaluator was given). */
  async evaluate(): Promise<Pick<MetricsRow, 'val_loss' | 'val_bleu'>> {
    const batches = validationBatches(this.data, this.settings);
    return guardGpu(`validation at step ${this.step}`, async () => {
      const v = await validationLoss(this.model, batches, this.settings.label_smoothing);
      const out: Pick<MetricsRow, 'val_loss' | 'val_bleu'> = { val_loss: v.loss };
      if (this.bleu && this.settings.bleu_sentences > 0) out.val_bleu = await this.bleu(this.model, this.step);
      return out;
    });
  }

  /** Trains until settings.steps or stop(); returns the last step done. status.json says how it ended. */
  async train(callbacks: TrainerCallbacks = {}): Promise<number> {
    this.run.writeStatus('running', this.step);
    this.breakpoint = undefined;
    this.diverged = undefined;
    try {
      const step = await this.loop(callbacks);
      const paused = this.breakpoint as RunEvent | undefined; // set by the loop
      const diverged = this.diverged as RunEvent | undefined;
      const state = paused ? 'paused' : diverged ? 'diverged' : step >= this.settings.steps ? 'completed' : 'stopped';
      this.run.writeStatus(state, step, (paused ?? diverged)?.message);
      return step;
    } catch (thrown) {
      // A GPU error: the failed work was not kept (step.ts); say how much was asked and how to go on.
      const err =
        thrown instanceof GpuError
          ? gpuFailure(thrown, {
              runPath: this.run.path,
              config: this.model.config,
              settings: this.settings,
              checkpoint: this.run.newestCheckpointStep(),
              adapter: gpuAdapterInWords(),
            })
          : thrown;
      this.run.writeStatus('failed', this.step, (err as Error).message);
      throw err;
    }
  }

  private async loop(callbacks: TrainerCallbacks): Promise<number> {
    const s = this.settings;
    let lastCheckpoint = this.step;
    while (this.step < s.steps && !this.stopRequested) {
      const { batch, next } = this.stream.at(this.position);
      callbacks.onBatch?.(this.step + 1, batch);
      const lr = this.lr(this.step + 1);
      const started = performance.now();
      const every = telemetryEvery(s);
      const telemetry = every > 0 && this.probeBatch.length > 0 && (this.step + 1) % every === 0;
      const r = await trainStep(this.model, this.optimizer, batch, {
        lr,
        labelSmoothing: s.label_smoothing,
        clipNorm: s.clip_norm,
        seed: s.seed * 1_000_003 + this.step * 1000 + this.dropoutSalt,
        headGradNorms: telemetry,
        gradMask: this.gradMask,
        accumulate: s.accumulate ?? 1,
        work: `step ${this.step + 1}`,
      });
      const seconds = (performance.now() - started) / 1000;
      this.step++;
      this.position = next;
      const row: MetricsRow = {
        step: this.step,
        lr,
        loss: r.loss,
        nll: r.nll,
        tokens_per_sec: r.tokens / seconds,
        grad_norm: r.gradNorm,
        time: Date.now(),
      };
      const site = r.applied
        ? undefined
        : await guardGpu(`step ${this.step}: locating the non-finite value`, () =>
            locateNonFinite(this.model, batch, r.headGradNorms),
          );
      const findings = this.monitor.onStep(this.step, r.loss, r.gradNorm, site);
      const evaluated = r.applied && s.eval_every && this.step % s.eval_every === 0;
      if (evaluated && this.data.valid.length) {
        Object.assign(row, await this.evaluate());
        findings.push(...this.monitor.onValidation(this.step, row.val_loss!));
      }
      this.run.appendMetrics([row]);
      callbacks.onStep?.(row);
      if (r.applied && s.snapshot_every && this.step % s.snapshot_every === 0) {
        const snap = await this.snapshot();
        if (snap) {
          callbacks.onSnapshot?.(snap);
          // The server sends it on the next turn of the event loop, which on wasm and cpu came only
          // at the step's end, after telemetry: yielded here, the live view gets it first, and the
          // file's fsync is no part of its latency either (issue 34).
          await new Promise((resolve) => setImmediate(resolve));
          this.writeSnapshot(snap);
        }
      }
      if (telemetry && r.applied) findings.push(...(await this.telemetry(r, row, callbacks)));
      if (this.report(findings, callbacks)) {
        await this.checkpoint(); // a breakpoint: paused here, resumable from this step
        lastCheckpoint = this.step;
        break;
      }
      // On wasm and cpu every await above resolves as a microtask: yield to the event loop once a
      // step, or signals (Ctrl-C) and the server's messages (train/stop) would never be handled.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.step % s.checkpoint_every === 0) {
        await this.checkpoint();
        lastCheckpoint = this.step;
      }
    }
    if (lastCheckpoint !== this.step) {
      await this.checkpoint();
    }
    return this.step;
  }

  dispose(): void {
    this.lock?.release();
    tf.dispose([...this.gradMask.values()]);
    this.optimizer.dispose();
    this.model.dispose();
  }
}
