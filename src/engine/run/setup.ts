/**
 * Creating a run folder from a data spec, a model preset (or file) and training settings, and
 * opening one again to resume or decode. Never overwrites a run: a folder that holds one is
 * resumed, not replaced.
 */
import { readFileSync } from 'node:fs';
import { configFromPreset, modelFields, PRESETS, validateConfig, type TransformerConfig } from '../model/config';
import { DEFAULT_SPECIAL_IDS } from '../model/config';
import { prepareData, type DataSpec, type PreparedData } from '../data/dataset';
import { RUN_FORMAT, RUN_FORMAT_VERSION } from '../../protocol/runFolder';
import { RunDir } from './runDir';
import { TRAINING_DEFAULTS, validateSettings, type TrainingSettings } from './settings';

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
}

function readJsonFile(path: string): Record<string, unknown> {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('expected a JSON object');
    return v;
  } catch (err) {
    throw new Error(
      `${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (err as Error).message}`,
    );
  }
}

function baseSettings(configName: string, file: Record<string, unknown> | null): TrainingSettings {
  const fromFile = (file?.training ?? {}) as Partial<TrainingSettings>;
  return { ...(TRAINING_DEFAULTS[configName] ?? TRAINING_DEFAULTS.tiny), ...fromFile };
}

export function createRun(spec: NewRun): OpenRun {
  const run = new RunDir(spec.out);
  if (run.exists()) throw new Error(`${spec.out} already holds a run; resume it with --resume or choose another --out`);
  const isPreset = spec.config in PRESETS;
  const file = isPreset ? null : readJsonFile(spec.config);
  const settings = validateSettings(
    { ...baseSettings(isPreset ? spec.config : 'tiny', file), ...spec.overrides },
    isPreset ? '--config' : spec.config,
  );
  run.create();
  const data = prepareData(spec.data, run.vocabPath, {
    vocabSize: settings.vocab_size,
    maxLength: settings.max_length,
  });
  const vocab = { src_vocab: data.vocab.size, tgt_vocab: data.vocab.size };
  const config = isPreset
    ? configFromPreset(spec.config, vocab, {
        max_len: Math.max(PRESETS[spec.config as keyof typeof PRESETS].max_len, settings.max_length + 2),
      })
    : validateConfig({ ...DEFAULT_SPECIAL_IDS, ...file, ...vocab }, spec.config);
  run.writeConfig({
    run_format: RUN_FORMAT,
    run_format_version: RUN_FORMAT_VERSION,
    writer: 'engine',
    ...modelFields(config),
    training: settings,
    data: spec.data,
  });
  return { run, config, settings, data, dataSpec: spec.data };
}

/** Opens an existing run; `overrides` may extend it (more steps) on resume. */
export function openRun(path: string, overrides: Partial<TrainingSettings> = {}): OpenRun {
  const run = new RunDir(path);
  if (!run.exists()) throw new Error(`${path}: not a run folder (no config.json)`);
  const { model, raw } = run.readConfig();
  const settings = validateSettings({ ...(raw.training as object), ...overrides }, run.configPath);
  const dataSpec = raw.data as DataSpec | undefined;
  if (!dataSpec || typeof dataSpec !== 'object' || !('kind' in dataSpec))
    throw new Error(`${run.configPath}: data: missing the data spec of the run`);
  const data = prepareData(dataSpec, run.vocabPath, { vocabSize: settings.vocab_size, maxLength: settings.max_length });
  if (data.vocab.size !== model.tgt_vocab)
    throw new Error(`${run.vocabPath}: ${data.vocab.size} tokens, config.json says tgt_vocab ${model.tgt_vocab}`);
  if (Object.keys(overrides).length) run.writeConfig({ ...raw, training: settings });
  return { run, config: model, settings, data, dataSpec };
}
