/**
 * The head inspector's messages (webview/head/page.ts ↔ panels/head/panel.ts): attention,
 * new probe snapshots and the cursor to its page; the cursor (its slider) and a head opened (its
 * comparison's ranked heads) from it.
 */
import { type Attention, checkAttention } from '../attention';
import { arrayOf, object } from '../check';
import { checkStateOf, type HeadState } from '../panelState';
import {
  type AttentionMsg,
  type CursorFromPageMsg,
  type CursorMsg,
  type OpenHeadMsg,
  pageProtocol,
  sharedChecks,
  type StateMsg,
  type Versioned,
} from '../webview';

/** Attention of the probe sentence at more steps, for the page to merge into its history (mergeSnapshots). */
export interface SnapshotsMsg extends Versioned {
  type: 'snapshots';
  items: Attention[];
}

export type HeadToPage = StateMsg<HeadState> | AttentionMsg | SnapshotsMsg | CursorMsg;
export type HeadFromPage = CursorFromPageMsg | OpenHeadMsg;

export const headPage = pageProtocol<'head', HeadToPage, HeadFromPage>(
  'head',
  checkStateOf('head'),
  {
    attention: sharedChecks.attention,
    snapshots: object({ items: arrayOf(checkAttention) }),
    cursor: sharedChecks.cursor,
  },
  { cursor: sharedChecks.cursorFromPage, openHead: sharedChecks.openHead },
);
