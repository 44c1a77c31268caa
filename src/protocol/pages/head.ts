/**
 * The head inspector's messages (webview/head/page.ts ↔ panels/head/panel.ts): attention,
 * new probe snapshots, the cursor and a query row's score decomposition to its page; the cursor
 * (its slider), a head opened (its comparison's ranked heads) and a query row's scores (heads/scores,
 * with an `id` its reply echoes) from it.
 */
import { type Attention, checkAttention, type HeadRef, headRefFields } from '../attention';
import { arrayOf, intIn, isIndex, isString, object, optional } from '../check';
import { BLOCK_AXIS_LIMIT } from '../attentionBlock';
import { checkHeadScores, type HeadScores } from '../headScores';
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

/** Asks for one query row of a head split into its parts (heads/scores), at the selection's run, step and input. */
export interface RequestScoresMsg extends Versioned, HeadRef {
  type: 'requestScores';
  id: number;
  query: number;
}
/** The answer to `requestScores` `id`: the row's decomposition, or why there is none. */
export interface HeadScoresMsg extends Versioned {
  type: 'headScores';
  id: number;
  scores?: HeadScores;
  error?: string;
}

export type HeadToPage = StateMsg<HeadState> | AttentionMsg | SnapshotsMsg | CursorMsg | HeadScoresMsg;
export type HeadFromPage = CursorFromPageMsg | OpenHeadMsg | RequestScoresMsg;

export const headPage = pageProtocol<'head', HeadToPage, HeadFromPage>(
  'head',
  checkStateOf('head'),
  {
    attention: sharedChecks.attention,
    snapshots: object({ items: arrayOf(checkAttention) }),
    cursor: sharedChecks.cursor,
    headScores: object({ id: isIndex, scores: optional(checkHeadScores), error: optional(isString) }),
  },
  {
    cursor: sharedChecks.cursorFromPage,
    openHead: sharedChecks.openHead,
    requestScores: object({ id: isIndex, ...headRefFields, query: intIn(0, BLOCK_AXIS_LIMIT - 1) }),
  },
);
