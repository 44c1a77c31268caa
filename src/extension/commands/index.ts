/**
 * The command table (after rust-analyzer's createCommands): each id maps to a named function of the
 * shared context. Which commands show where is decided by package.json `when` and `enablement`
 * clauses on the context keys the TrainingSession sets.
 *
 * Every command takes an optional argument object that answers its questions (run folder, data,
 * text, head, file), so tests and other extensions can run it without any UI; whatever is missing
 * is asked with quick picks, input boxes and folder pickers.
 */
import type { Cmd, Ctx } from '../ctx';
import { ablateHeads } from './ablate';
import { exportView } from './export';
import { forkRun } from './fork';
import { openGlobalPair, showGlobalView } from './globalView';
import { exportRunReport } from './report';
import { showHeadReport } from './heads';
import { checkRunFolder, showAblations, showImportance } from './reportPanels';
import { decodeSentence, inspectHead, openBreakpoint, openHeads, showBeamTree, showCheckpoint } from './inspect';
import {
  compareRuns,
  followRun,
  openAttention,
  openDashboard,
  openRun,
  refreshRuns,
  showEngineInfo,
  showPositional,
} from './runs';
import { resume, stop, train, trainingActions } from './training';

const COMMANDS: Record<string, (ctx: Ctx) => Cmd> = {
  'attentionDebugger.train': train,
  'attentionDebugger.stop': stop,
  'attentionDebugger.resume': resume,
  'attentionDebugger.trainingActions': trainingActions,
  'attentionDebugger.decode': decodeSentence,
  'attentionDebugger.beamTree': showBeamTree,
  'attentionDebugger.headImportance': showHeadReport,
  'attentionDebugger.showImportance': showImportance,
  'attentionDebugger.ablateHeads': ablateHeads,
  'attentionDebugger.showAblations': showAblations,
  'attentionDebugger.checkRun': checkRunFolder,
  'attentionDebugger.inspectHead': inspectHead,
  'attentionDebugger.showGlobalView': showGlobalView,
  'attentionDebugger.openGlobalPair': openGlobalPair,
  'attentionDebugger.showCheckpoint': showCheckpoint,
  'attentionDebugger.openBreakpoint': openBreakpoint,
  'attentionDebugger.openHeads': openHeads,
  'attentionDebugger.openDashboard': openDashboard,
  'attentionDebugger.openAttention': openAttention,
  'attentionDebugger.openRun': openRun,
  'attentionDebugger.followRun': followRun,
  'attentionDebugger.compareRuns': compareRuns,
  'attentionDebugger.forkRun': forkRun,
  'attentionDebugger.showPositional': showPositional,
  'attentionDebugger.exportView': exportView,
  'attentionDebugger.exportRunReport': exportRunReport,
  'attentionDebugger.refreshRuns': refreshRuns,
  'attentionDebugger.showEngineInfo': showEngineInfo,
};

/** The handlers, bound to `ctx`, by command id. */
export function createCommands(ctx: Ctx): Record<string, Cmd> {
  return Object.fromEntries(Object.entries(COMMANDS).map(([id, make]) => [id, make(ctx)]));
}
