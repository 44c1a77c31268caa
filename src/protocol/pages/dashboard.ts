/**
 * The training dashboard's messages (webview/dashboard/page.ts ↔ panels/dashboard/panel.ts): what
 * its panel posts to its page (the state, metrics appended, the schedule, the cursor, findings,
 * hover, other runs drawn with it), what its page posts (the cursor, a finding's head at its
 * step, hover), and their checks.
 */
import { arrayOf, isBoolean, object, optional } from '../check';
import { checkMetricRow, type MetricRow } from '../metrics';
import {
  checkOverlayRun,
  checkSchedule,
  checkStateOf,
  type DashboardState,
  type OverlayRun,
  type Schedule,
} from '../panelState';
import {
  type CursorFromPageMsg,
  type CursorMsg,
  type EventsMsg,
  type HoverStepMsg,
  type OpenHeadAtMsg,
  pageProtocol,
  sharedChecks,
  type StateMsg,
  type Versioned,
} from '../webview';

/** Append training steps to the dashboard. `reset` first clears what it shows (a new run). */
export interface MetricsMsg extends Versioned {
  type: 'metrics';
  rows: MetricRow[];
  reset?: boolean;
}

/** The planned learning-rate curve of the whole run, drawn ahead of the actual points. */
export interface ScheduleMsg extends Versioned, Schedule {
  type: 'schedule';
}

/** Other runs drawn on the dashboard with the selected one (a fork's begin at its first step); [] clears them. */
export interface OverlayMsg extends Versioned {
  type: 'overlay';
  runs: OverlayRun[];
}

/** The check of a metrics message's fields (the Heads panel's page takes the same message). */
export const checkMetricsMsg = object({ rows: arrayOf(checkMetricRow), reset: optional(isBoolean) });

export type DashboardToPage =
  | StateMsg<DashboardState>
  | MetricsMsg
  | ScheduleMsg
  | CursorMsg
  | EventsMsg
  | HoverStepMsg
  | OverlayMsg;
export type DashboardFromPage = CursorFromPageMsg | OpenHeadAtMsg | HoverStepMsg;

export const dashboardPage = pageProtocol<'dashboard', DashboardToPage, DashboardFromPage>(
  'dashboard',
  checkStateOf('dashboard'),
  {
    metrics: checkMetricsMsg,
    schedule: checkSchedule,
    cursor: sharedChecks.cursor,
    events: sharedChecks.events,
    hoverStep: sharedChecks.hoverStep,
    overlay: object({ runs: arrayOf(checkOverlayRun) }),
  },
  { cursor: sharedChecks.cursorFromPage, openHeadAt: sharedChecks.openHeadAt, hoverStep: sharedChecks.hoverStep },
);
