/**
 * The Run Check panel's messages (webview/runCheck/page.ts ↔ panels/runCheck/panel.ts): its state
 * to its page; from it, the folder checked again (it may have changed on disk).
 */
import { object } from '../check';
import { checkStateOf, type RunCheckState } from '../panelState';
import { pageProtocol, type StateMsg, type Versioned } from '../webview';

/** "Check again": the run folder read and checked anew. */
export interface RecheckMsg extends Versioned {
  type: 'recheck';
}

export type RunCheckToPage = StateMsg<RunCheckState>;
export type RunCheckFromPage = RecheckMsg;

export const runCheckPage = pageProtocol<'runCheck', RunCheckToPage, RunCheckFromPage>(
  'runCheck',
  checkStateOf('runCheck'),
  {},
  { recheck: object({}) },
);
