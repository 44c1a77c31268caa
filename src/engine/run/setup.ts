/**
 * Creating a run folder from a data spec, a model preset (or file) and training settings, and
 * opening one again to resume or decode. Never overwrites a run: a folder that holds one is
 * resumed, not replaced. Everything is checked before anything is written, and a new run folder
 * appears whole (staged beside it, then renamed) or not at all.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import {
  ConfigError,
  configFromPreset,
  DEFAULT_SPECIAL_IDS,
  MODEL_FIELDS,
  modelFields,
  nearestName,
  PRESETS,
  rejectUnknownFields,
  RUN_CONFIG_FIELDS,
  validateConfig,
  type TransformerConfig,
} from '../model/config';
import { corpusDirection, prepareData, type DataSpec, type PreparedData } from '../data/dataset';
import { RUN_FORMAT, RUN_FORMAT_VERSION } from '../../protocol/runFolder';
import { RunDir } from './runDir';
import { currentBackend } from '../backend';
import {
  checkResumeOverrides,
  TRAINING_DEFAULTS,
  TRAINING_FIELDS,
  validateSettings,
  type TrainingSettings,
} from './settings';
import { readJsonFile } from '../io/json';
import { checkTrainingMemory } from './memory';
import { activeGpuLimits, checkGpuTrainingMemory } from './gpuMemory';
import { checkVocabSize } from '../data/vocabulary';
import { pytorchTrainingError, readingDataSpec, readingSettings, writtenByPytorch } from './pytorchRun';

export interface NewRun {
  out: string;
  data: DataSpec;
  /** A preset name or a JSON file with the model fields (vocabulary sizes come from the data). */
  config: string;
  overrides: Partial<TrainingSettings>;
}

export interface OpenRun {
  run: RunDir;
  config: TransformerConfig;
  settings: TrainingSettings;
  data: PreparedData;
  dataSpec: DataSpec;
  /**
   * Writes what opening left to write, once the trainer is made (and resumed): a new run's folder,
   * renamed into place whole; for a resume, config.json with its changed settings or backend (and a
   * vocabulary it had to learn again). startTrainer calls it; calling it again does nothing.
   */
  commit?: () => void;
}

/** A --config file: a JSON object of model fields (and a "training" section), every name known. */
function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) {
    const presets = Object.keys(PRESETS);
    const near = nearestName(path, presets);
    const guess = near ? `, did you mean "${near}"?,` : '';
    throw new Error(
      `--config ${path}: not found: neither a preset (${presets.join(', ')})${guess} nor a file; ` +
        'name a preset or a JSON file with the model fields',
    );
  }
  const v = readJsonFile(path);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${path}: expected a JSON object`);
  const o = v as Record<string, unknown>;
  rejectUnknownFields(o, [...MODEL_FIELDS, ...RUN_CONFIG_FIELDS], path);
  if (o.training !== undefined) {
    if (typeof o.training !== 'object' || o.training === null || Array.isArray(o.training))
      throw new ConfigError(path, 'training', 'expected an object of training settings');
    rejectUnknownFields(o.training as Record<string, unknown>, TRAINING_FIELDS, path, 'training.');
  }
  return o;
}

function baseSettings(configName: string, file: Record<string, unknown> | null): TrainingSettings {
  const fromFile = (file?.training ?? {}) as Partial<TrainingSettings>;
  return { ...(TRAINING_DEFAULTS[configName] ?? TRAINING_DEFAULTS.tiny), ...fromFile };
}

/** Checks that fail only once training runs, made before anything is written: positions and the batch budget. */
function checkData(config: TransformerConfig, settings: TrainingSettings, data: PreparedData, source: string): void {
  if (data.train.length === 0)
    throw new Error(
      `${source}: max_length: no training pair is left with at most ${settings.max_length} tokens a side; ` +
        'raise max_length',
    );
  let longest = 0;
  let positions = 0;
  for (const p of [...data.train, ...data.valid]) {
    longest = Math.max(longest, p.src.length + p.tgt.length + 1);
    positions = Math.max(positions, p.src.length, p.tgt.length + 1);
  }
  if (positions > config.max_len)
    throw new Error(
      `${source}: max_len: ${config.max_len} positions cannot hold the longest sequence (${positions} tokens with ` +
        `<s> or </s>); raise max_len to ${positions} or lower max_length`,
    );
  if (longest > settings.batch_tokens)
    throw new Error(
      `${source}: batch_tokens: ${settings.batch_tokens} tokens cannot hold the longest pair (${longest} tokens, ` +
        `source and target); give at least ${longest}, or lower max_length`,
    );
}

/** Refuses an --out that exists with something other than an empty folder (a run is refused earlier). */
function checkOut(out: string): void {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory()) throw new Error(`--out ${out}: is a file, not a folder; choose another --out`);
  const entries = readdirSync(out);
  if (entries.length)
    throw new Error(
      `--out ${out}: not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}) but holds no ` +
        'run (no config.json); choose another --out, or empty it',
    );
}

/**
 * Checks and builds everything a new run needs (settings, model, data, vocabulary, memory) and
 * writes nothing: `commit()` then creates the folder whole. startTrainer commits once the trainer
 * is made, so a run that cannot start leaves no folder behind.
 */
export function prepareRun(spec: NewRun): OpenRun & { commit: () => void } {
  const run = new RunDir(spec.out);
  if (run.exists()) throw new Error(`${spec.out} already holds a run; resume it with --resume or choose another --out`);
  checkOut(spec.out);
  const isPreset = spec.config in PRESETS;
  const file = isPreset ? null : readConfigFile(spec.config);
  const source = isPreset ? '--config' : spec.config;
  const settings = validateSettings(
    withChecks(baseSettings(isPreset ? spec.config : 'tiny', file), spec.overrides),
    source,
  );
  checkVocabSize(
    settings.vocab_size,
    spec.overrides.vocab_size !== undefined ? '--vocab-size' : `${source}: vocab_size`,
  );
  if (spec.data.kind === 'task' && spec.overrides.vocab_size !== undefined)
    throw new Error(
      `--vocab-size sets the size of a BPE vocabulary learned from --data or --gettext; the ${spec.data.task} ` +
        `task's vocabulary is fixed at ${spec.data.vocabSize} tokens: leave --vocab-size out`,
    );
  // The direction is chosen here and recorded, so that a resume reads the corpus the same way.
  const dataSpec: DataSpec = spec.data.kind === 'files' ? { ...spec.data, ...corpusDirection(spec.data) } : spec.data;
  const data = prepareData(dataSpec, undefined, { vocabSize: settings.vocab_size, maxLength: settings.max_length });
  const vocab = { src_vocab: data.vocab.size, tgt_vocab: data.vocab.size };
  const config = isPreset
    ? configFromPreset(spec.config, vocab, {
        max_len: Math.max(PRESETS[spec.config as keyof typeof PRESETS].max_len, settings.max_length + 2),
      })
    : validateConfig({ ...DEFAULT_SPECIAL_IDS, ...file, ...vocab }, spec.config);
  const modelSource = isPreset ? `preset ${spec.config}` : spec.config;
  // On webgpu, the GPU's own counts and limits (gpuMemory.ts); elsewhere the wasm heap or this machine's memory.
  (activeGpuLimits() ? checkGpuTrainingMemory : checkTrainingMemory)(config, modelSource, {
    tokens: settings.batch_tokens,
    accumulate: settings.accumulate,
    name: spec.overrides.batch_tokens !== undefined ? '--batch-tokens' : 'batch_tokens',
  });
  checkData(config, settings, data, isPreset ? '--config' : spec.config);
  for (const field of ['freeze_heads', 'mask_heads'] as const)
    if (settings[field]?.length)
      throw new Error(
        `${source}: training.${field}: heads are frozen or masked by forking a trained run ` +
          `(train --fork RUN@STEP --${field.replace('_', '-')} …); leave it out of a new run`,
      );
  let committed = false;
  const commit = (): void => {
    if (committed) return;
    RunDir.createWhole(spec.out, (staged) => {
      data.vocab.save(staged.vocabPath);
      staged.writeConfig({
        run_format: RUN_FORMAT,
        run_format_version: RUN_FORMAT_VERSION,
        writer: 'engine',
        ...modelFields(config),
        training: settings,
        data: dataSpec,
        ...backendField(),
      });
    });
    committed = true;
  };
  return { run, config, settings, data, dataSpec, commit };
}

/**
 * config.json's `backend`: the tfjs backend this process trains on (docs/RUN_FOLDER.md), which a
 * new run records and a resume on another backend rewrites; none before a backend is chosen.
 */
function backendField(): { backend?: string } {
  const backend = currentBackend() as string | null;
  return backend ? { backend } : {};
}

/** Creates a new run folder now (prepareRun, then commit). */
export function createRun(spec: NewRun): OpenRun {
  const opened = prepareRun(spec);
  opened.commit();
  return opened;
}

/** Settings with overrides; the health checks' modes merge with the base's, check by check. */
function withChecks(base: object, overrides: Partial<TrainingSettings>): Record<string, unknown> {
  const checks = (base as Partial<TrainingSettings>).checks;
  return { ...base, ...overrides, ...(overrides.checks ? { checks: { ...checks, ...overrides.checks } } : {}) };
}

/**
 * Opens an existing run; `overrides` may change what a resume may change (settings.ts
 * RESUME_FIELDS: more steps, what is observed). Nothing is written here: `commit()` records the
 * changed settings (and a backend other than the one recorded) once the resume has succeeded.
 * `use` 'read' (evaluate, heads, probes) also opens a run PyTorch wrote, which 'train' (resume,
 * fork, batches) refuses.
 */
export function openRun(
  path: string,
  overrides: Partial<TrainingSettings> = {},
  use: 'train' | 'read' = 'train',
): OpenRun {
  const run = new RunDir(path);
  if (!run.exists()) throw new Error(`${path}: not a run folder (no config.json)`);
  const { model, raw } = run.readConfig();
  // A PyTorch run is read (its data and vocabulary), never trained on: pytorchRun.ts says why.
  const pytorch = writtenByPytorch(raw);
  if (pytorch && use === 'train') throw pytorchTrainingError(run.configPath);
  checkResumeOverrides(overrides, path);
  const settings = pytorch
    ? readingSettings(model)
    : validateSettings(withChecks(raw.training as object, overrides), run.configPath);
  const given = raw.data as DataSpec | undefined;
  if (!given || typeof given !== 'object' || !('kind' in given))
    throw new Error(`${run.configPath}: data: missing the data spec of the run`);
  const recorded = pytorch ? readingDataSpec(given) : given;
  // A run recorded without its direction was read in the order of its time: alphabetically.
  const dataSpec: DataSpec =
    recorded.kind === 'files' && !(recorded.srcLang && recorded.tgtLang)
      ? { ...recorded, ...corpusDirection(recorded, 'alphabetical') }
      : recorded;
  const vocabLost = !existsSync(run.vocabPath);
  const data = prepareData(dataSpec, run.vocabPath, { vocabSize: settings.vocab_size, maxLength: settings.max_length });
  if (data.vocab.size !== model.tgt_vocab)
    throw new Error(`${run.vocabPath}: ${data.vocab.size} tokens, config.json says tgt_vocab ${model.tgt_vocab}`);
  const changed = Object.keys(overrides).length > 0 || dataSpec !== recorded;
  let committed = false;
  const commit = (): void => {
    if (committed) return;
    if (vocabLost) data.vocab.save(run.vocabPath);
    const backend = backendField();
    if (changed || (backend.backend && raw.backend !== backend.backend))
      run.writeConfig({ ...raw, training: settings, data: dataSpec, ...backend });
    committed = true;
  };
  return { run, config: model, settings, data, dataSpec, commit };
}
