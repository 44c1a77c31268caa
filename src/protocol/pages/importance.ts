/**
 * The Head Importance panel's messages (webview/importance/page.ts ↔ panels/importance/panel.ts):
 * its state to its page; from it, a head at the report's step (the head inspector), Head
 * Importance and Pruning run on the run it shows, and the report's Markdown opened.
 */
import { object } from '../check';
import { checkStateOf, type ImportanceState } from '../panelState';
import { type OpenHeadAtMsg, pageProtocol, sharedChecks, type StateMsg, type Versioned } from '../webview';

/** "Run Head Importance": the panel shows a run without a report. */
export interface ComputeImportanceMsg extends Versioned {
  type: 'computeImportance';
}
/** The Markdown report saved beside the JSON, opened rendered (as the command did before the panel). */
export interface OpenMarkdownMsg extends Versioned {
  type: 'openMarkdown';
}

export type ImportanceToPage = StateMsg<ImportanceState>;
export type ImportanceFromPage = OpenHeadAtMsg | ComputeImportanceMsg | OpenMarkdownMsg;

export const importancePage = pageProtocol<'importance', ImportanceToPage, ImportanceFromPage>(
  'importance',
  checkStateOf('importance'),
  {},
  { openHeadAt: sharedChecks.openHeadAt, computeImportance: object({}), openMarkdown: object({}) },
);
