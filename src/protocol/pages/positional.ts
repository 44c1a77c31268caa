/**
 * The positional-encoding view's messages (webview/positional/page.ts ↔
 * panels/positional/panel.ts): the encoding matrix to its page; its page asks nothing beyond the
 * common ones.
 */
import { checkPositionalPayload, checkStateOf, type PositionalPayload, type PositionalState } from '../panelState';
import { pageProtocol, type StateMsg, type Versioned } from '../webview';

export interface PositionalMsg extends Versioned, PositionalPayload {
  type: 'positional';
}

export type PositionalToPage = StateMsg<PositionalState> | PositionalMsg;
export type PositionalFromPage = never;

export const positionalPage = pageProtocol<'positional', PositionalToPage, PositionalFromPage>(
  'positional',
  checkStateOf('positional'),
  { positional: checkPositionalPayload },
  {},
);
