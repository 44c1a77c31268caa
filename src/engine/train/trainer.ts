/**
 * The training loop of §5: batches by token budget, Adam at the scheduled rate, label smoothing,
 * periodic validation, checkpoints and attention snapshots of a fixed probe sentence. It reports
 * through callbacks (the seam to the CLI's progress bar and the extension's panels) and stops
 * cleanly, after a consistent checkpoint, when asked.
 */
import { namedVariables } from '../model/params';
import { tensorsOf, paramsFromTensors } from '../checkpoint';
import type { Attention } from '../../protocol/attention';
import { attentionOfPairs } from '../inspect';
import type { Transformer } from '../model/transformer';
import { BOS } from '../data/specialTokens';
import { Adam } from './adam';
import { BatchStream } from '../data/batchStream';
import type { IdPair, PreparedData } from '../data/dataset';
import { type BleuEvaluator, validationLoss } from './evaluate';
import type { DataPosition, MetricsRow, RunDir } from '../run/runDir';
import { transformerLr } from './schedule';
import type { TrainingSettings } from '../run/settings';
import { trainStep } from './step';

export interface TrainerCallbacks {
  onStep?(row: MetricsRow): void;
  /** The probe pair's attention, just written to snapshots/. */
  onSnapshot?(attention: Attention): void;
}

export class Trainer {
  private step = 0;
  private position: DataPosition = { epoch: 0, batch: 0 };
  private stopRequested = false;
  private readonly stream: BatchStream;
  private readonly probe: IdPair | undefined;

  constructor(
    readonly run: RunDir,
    readonly model: Transformer,
    readonly settings: TrainingSettings,
    readonly data: PreparedData,
    private readonly bleu?: BleuEvaluator,
    private readonly optimizer = new Adam(),
  ) {
    this.stream = new BatchStream(data.train, settings.batch_tokens, settings.seed);
    this.probe = data.valid[0] ?? data.train[0];
  }

  /** Restores model, optimizer, step and data position from the newest complete checkpoint. */
  resume(): number {
    this.run.removeTornWrites(); // a run killed while writing resumes from its last whole files
    const ckpt = this.run.latestResumable();
    if (!ckpt) {
      this.run.truncateMetrics(0); // killed before its first checkpoint: start over
      return 0;
    }
    const loaded = paramsFromTensors(this.model.config, ckpt.weights, this.run.weightsPath(ckpt.step));
    for (const [name, v] of this.model.params) v.assign(loaded.get(name)!);
    for (const v of new Set(loaded.values())) v.dispose();
    this.optimizer.restore(namedVariables(this.model.params), ckpt.step, ckpt.optim, this.run.optimPath(ckpt.step));
    this.step = ckpt.step;
    this.position = ckpt.position;
    this.run.truncateMetrics(ckpt.step);
    return ckpt.step;
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
    const weights = await tensorsOf(this.model.params);
    const optim = await this.optimizer.state(namedVariables(this.model.params));
    this.run.writeCheckpoint(this.step, weights, optim, this.position);
  }

  /** Writes the probe pair's attention at this step to snapshots/ and returns it. */
  async snapshot(): Promise<Attention | undefined> {
    if (!this.probe) return undefined;
    const tgtIn = [BOS, ...this.probe.tgt];
    const [pair] = await attentionOfPairs(this.model, [this.probe.src], [tgtIn]);
    const src = this.data.vocab.tokens(this.probe.src);
    const tgt = this.data.vocab.tokens(tgtIn);
    this.run.writeSnapshot({
      step: this.step,
      pairs: [{ src, tgt, srcIds: this.probe.src, tgtIds: tgtIn, maps: pair.maps }],
    });
    return {
      source: { runDir: this.run.path, step: this.step, input: 'probe' },
      srcTokens: src,
      tgtTokens: tgt,
      maps: pair.maps,
    };
  }

  /** Validation loss (and BLEU when an evaluator was given). */
  async evaluate(): Promise<Pick<MetricsRow, 'val_loss' | 'val_bleu'>> {
    const batches = BatchStream.evaluationBatches(this.data.valid, this.settings.batch_tokens);
    const v = await validationLoss(this.model, batches, this.settings.label_smoothing);
    const out: Pick<MetricsRow, 'val_loss' | 'val_bleu'> = { val_loss: v.loss };
    if (this.bleu && this.settings.bleu_sentences > 0) out.val_bleu = await this.bleu(this.model, this.step);
    return out;
  }

  /** Trains until settings.steps or stop(); returns the last step done. status.json says how it ended. */
  async train(callbacks: TrainerCallbacks = {}): Promise<number> {
    this.run.writeStatus('running', this.step);
    try {
      const step = await this.loop(callbacks);
      this.run.writeStatus(step >= this.settings.steps ? 'completed' : 'stopped', step);
      return step;
    } catch (err) {
      this.run.writeStatus('failed', this.step, (err as Error).message);
      throw err;
    }
  }

  private async loop(callbacks: TrainerCallbacks): Promise<number> {
    const s = this.settings;
    let lastCheckpoint = this.step;
    while (this.step < s.steps && !this.stopRequested) {
      const { batch, next } = this.stream.at(this.position);
      const lr = this.lr(this.step + 1);
      const started = performance.now();
      const r = await trainStep(this.model, this.optimizer, batch, {
        lr,
        labelSmoothing: s.label_smoothing,
        clipNorm: s.clip_norm,
        seed: s.seed * 1_000_003 + this.step * 1000,
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
      if (!Number.isFinite(r.loss))
        throw new Error(
          `training diverged at step ${this.step}: loss is ${r.loss} (grad norm ${r.gradNorm}); lower --lr-factor or set --clip-norm`,
        );
      const evaluated = s.eval_every && this.step % s.eval_every === 0;
      if (evaluated && this.data.valid.length) Object.assign(row, await this.evaluate());
      this.run.appendMetrics([row]);
      callbacks.onStep?.(row);
      if (s.snapshot_every && this.step % s.snapshot_every === 0) {
        const snap = await this.snapshot();
        if (snap) callbacks.onSnapshot?.(snap);
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
    this.optimizer.dispose();
    this.model.dispose();
  }
}
