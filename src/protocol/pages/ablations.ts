/**
 * The Ablation Results panel's messages (webview/ablations/page.ts ↔ panels/ablations/panel.ts):
 * its state to its page; from it, Ablate Heads… run on the run it shows.
 */
import { object } from '../check';
import { type AblationsState, checkStateOf } from '../panelState';
import { pageProtocol, type StateMsg, type Versioned } from '../webview';

/** "Ablate Heads…": try another ablation on the run the panel shows. */
export interface AblateMsg extends Versioned {
  type: 'ablate';
}

export type AblationsToPage = StateMsg<AblationsState>;
export type AblationsFromPage = AblateMsg;

export const ablationsPage = pageProtocol<'ablations', AblationsToPage, AblationsFromPage>(
  'ablations',
  checkStateOf('ablations'),
  {},
  { ablate: object({}) },
);
