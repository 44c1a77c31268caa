/**
 * The catalogue of the engine ↔ extension wire: every JSON-RPC request and notification the engine
 * answers or sends, one entry each, with its method name, its params and result types, and the
 * validators of both (as rust-analyzer's lsp_ext.ts lists its LSP extensions). The payload types and
 * their validators live in their topic files; this is the one place that names methods. The server
 * (src/engine/server/) and the client (src/extension/engineClient.ts and its callers) import the
 * methods from here only.
 */
import {
  type AblationEffect,
  type AblationEffectParams,
  type AblationScore,
  type AblationScoreParams,
  checkAblationEffect,
  checkAblationEffectParams,
  checkAblationScore,
  checkAblationScoreParams,
} from './ablation';
import {
  type AttentionBlock,
  type AttentionBlockParams,
  checkAttentionBlockParams,
  checkWireBlock,
} from './attentionBlock';
import { type BeamTreeView, checkBeamTreeView } from './beamTree';
import { arrayOf, isNothing, nullable } from './check';
import { checkEngineInfo, checkEngineLog, type EngineInfo, type EngineLog } from './engine';
import { checkPollParams, checkRunPoll, type PollParams, type RunPoll } from './follow';
import { checkForkParams, type ForkParams } from './fork';
import {
  checkHeadReport,
  checkHeadReportParams,
  checkHeadsProgress,
  checkHeadsSavedParams,
  type HeadReport,
  type HeadReportParams,
  type HeadsProgress,
  type HeadsSavedParams,
} from './heads';
import {
  type AttentionParams,
  type AttentionResult,
  type BeamTreeParams,
  checkAttentionParams,
  checkAttentionResult,
  checkBeamTreeParams,
  checkPositional,
  checkPositionalParams,
  checkSnapshotsParams,
  type Positional,
  type PositionalParams,
  type SnapshotsParams,
} from './inspection';
import { checkGlobalView, checkGlobalViewParams, type GlobalView, type GlobalViewParams } from './globalView';
import { checkHeadScores, checkHeadScoresParams, type HeadScores, type HeadScoresParams } from './headScores';
import { checkReplay, checkReplayParams, type Replay, type ReplayParams } from './replay';
import { checkRunCheck, checkRunCheckParams, type RunCheck, type RunCheckParams } from './runCheck';
import { notification, request } from './rpc';
import {
  checkReportWriteParams,
  checkReportWriteResult,
  type ReportWriteParams,
  type ReportWriteResult,
} from './report';
import {
  checkOpenedRun,
  checkOpenParams,
  checkResumeParams,
  checkRunSummary,
  checkStopResult,
  checkTrainEnded,
  checkTrainEvent,
  checkTrainMetrics,
  checkTrainParams,
  checkTrainSnapshot,
  checkTrainTelemetry,
  type OpenedRun,
  type OpenParams,
  type ResumeParams,
  type RunSummary,
  type StopResult,
  type TrainEnded,
  type TrainEvent,
  type TrainMetrics,
  type TrainParams,
  type TrainSnapshot,
  type TrainTelemetry,
} from './training';
import { checkWireAttention, type WireAttention } from './wire';

// ---- the engine ------------------------------------------------------------------------------

/** Who is answering, and on which tfjs backend. */
export const engineInfo = request<void, EngineInfo>('engine/info', isNothing, checkEngineInfo);
/** A line for the extension's output channel (engine → extension). */
export const engineLog = notification<EngineLog>('engine/log', checkEngineLog);

// ---- runs ------------------------------------------------------------------------------------

/** A run on disk: its summary, every metrics row, telemetry row and event, and a follower's cursor. */
export const runOpen = request<OpenParams, OpenedRun>('run/open', checkOpenParams, checkOpenedRun);
/** What a folder another process writes gained since the last poll (follow.ts). */
export const runPoll = request<PollParams, RunPoll>('run/poll', checkPollParams, checkRunPoll);
/** A run folder checked against its format, as `check-run` checks it (runCheck.ts). */
export const runCheck = request<RunCheckParams, RunCheck>('run/check', checkRunCheckParams, checkRunCheck);
/** The probe sentence's attention at each snapshot step (the head inspector's slider). */
export const snapshotsGet = request<SnapshotsParams, WireAttention[]>(
  'snapshots/get',
  checkSnapshotsParams,
  arrayOf(checkWireAttention),
);

// ---- training (one run at a time) ------------------------------------------------------------

/** Starts a new run; training goes on in the engine, reported by the notifications below. */
export const trainStart = request<TrainParams, RunSummary>('train/start', checkTrainParams, checkRunSummary);
/** Goes on with a run from its newest checkpoint (ENGINE_ERROR.runFinished when it is at its budget). */
export const trainResume = request<ResumeParams, RunSummary>('train/resume', checkResumeParams, checkRunSummary);
/** A new run from a checkpoint of another, with heads frozen, masked or re-initialised (fork.ts). */
export const trainFork = request<ForkParams, RunSummary>('train/fork', checkForkParams, checkRunSummary);
/** A run's step trained again exactly from the checkpoint before it, the run folder unchanged (replay.ts). */
export const trainReplay = request<ReplayParams, Replay>('train/replay', checkReplayParams, checkReplay);
/** Stops the running training after the step in progress, with a checkpoint; answers once it is written. */
export const trainStop = request<void, StopResult>('train/stop', isNothing, checkStopResult);

/** Rows of metrics.jsonl as they are logged (engine → extension). */
export const trainMetrics = notification<TrainMetrics>('train/metrics', checkTrainMetrics);
/** The probe's attention at a snapshot step. */
export const trainSnapshot = notification<TrainSnapshot>('train/snapshot', checkTrainSnapshot);
/** Per-head statistics of a snapshot step. */
export const trainTelemetry = notification<TrainTelemetry>('train/telemetry', checkTrainTelemetry);
/** A health check fired (a warning; a breakpoint ends the run with train/ended `paused`). */
export const trainEvent = notification<TrainEvent>('train/event', checkTrainEvent);
/** The run ended: completed, stopped, failed, paused by a breakpoint or diverged. */
export const trainEnded = notification<TrainEnded>('train/ended', checkTrainEnded);

// ---- attention -------------------------------------------------------------------------------

/** Any pair at any checkpoint, decoded first when it has no target; max-pooled past 256 tokens (algorithms/pool.ts). */
export const attentionGet = request<AttentionParams, AttentionResult>(
  'attention/get',
  checkAttentionParams,
  checkAttentionResult,
);
/** One head's block of a pooled pair, whole up to 256 a side, else pooled to that (attentionBlock.ts). */
export const attentionBlock = request<AttentionBlockParams, AttentionBlock<string>>(
  'attention/block',
  checkAttentionBlockParams,
  checkWireBlock,
);
/** One head's query row: each key's pre-softmax score split into the parts that sum to it (headScores.ts). */
export const headsScores = request<HeadScoresParams, HeadScores>(
  'heads/scores',
  checkHeadScoresParams,
  checkHeadScores,
);
/** One head's queries and keys over the validation split in 2-D, on a basis fitted once (globalView.ts). */
export const headsGlobal = request<GlobalViewParams, GlobalView>(
  'heads/global',
  checkGlobalViewParams,
  checkGlobalView,
);
/** The positional encoding of a run (learned rows) or the sinusoid for d_model × positions (§3.5). */
export const positional = request<PositionalParams, Positional>('positional', checkPositionalParams, checkPositional);

// ---- decoding --------------------------------------------------------------------------------

/** A sentence's beam search at a checkpoint, with its whole search tree (beamTree.ts). */
export const beamTreeGet = request<BeamTreeParams, BeamTreeView>('beam/tree', checkBeamTreeParams, checkBeamTreeView);

// ---- heads: ablation, importance, pruning ----------------------------------------------------

/** What switching heads off does to one input at a checkpoint (ablation.ts). */
export const ablationEffect = request<AblationEffectParams, AblationEffect>(
  'ablation/effect',
  checkAblationEffectParams,
  checkAblationEffect,
);
/** What switching heads off costs on the run's test split, decoded greedily. */
export const ablationScore = request<AblationScoreParams, AblationScore>(
  'ablation/score',
  checkAblationScoreParams,
  checkAblationScore,
);
/** Importance and pruning curves of a checkpoint (heads.ts); minutes, reported by heads/progress. */
export const headsReport = request<HeadReportParams, HeadReport>(
  'heads/report',
  checkHeadReportParams,
  checkHeadReport,
);
/** The newest heads report the extension saved beside a run (savedHeadReport.ts), or null. */
export const headsSaved = request<HeadsSavedParams, HeadReport | null>(
  'heads/saved',
  checkHeadsSavedParams,
  nullable(checkHeadReport),
);
/** heads/report's progress: `done` of `total` pruning points measured (engine → extension). */
export const headsProgress = notification<HeadsProgress>('heads/progress', checkHeadsProgress);

// ---- sharing ---------------------------------------------------------------------------------

/** A run's report as one self-contained HTML file, written whole to `out` (report.ts). */
export const reportWrite = request<ReportWriteParams, ReportWriteResult>(
  'report/write',
  checkReportWriteParams,
  checkReportWriteResult,
);
