/**
 * Live updates reach the pages at most every LIVE_POST_MS. A small model sends 30 snapshots and 30
 * telemetry rows a second; pages that drew each one kept the workbench's renderer (which also draws
 * the Runs tree and relays the extension host) too busy for a click or a reveal to be answered. The
 * store takes each update at once; a page gets, in one post, what came since its last: every new
 * snapshot and telemetry row, and the newest attention only. A lone update goes out at once.
 */
import type { Attention } from '../../protocol/attention';
import type { TelemetryRow } from '../../protocol/telemetry';

/** The least time between two live posts to the pages: at most 10 a second. */
export const LIVE_POST_MS = 100;

export interface LiveBatch {
  /** The newest live attention (of the probe, at the newest step), if one came. */
  attention?: Attention;
  snapshots: Attention[];
  telemetry: TelemetryRow[];
}

export class LivePosts {
  private batch: LiveBatch = { snapshots: [], telemetry: [] };
  private timer: NodeJS.Timeout | undefined;
  private last = -Infinity;

  constructor(
    private readonly post: (batch: LiveBatch) => void,
    private readonly everyMs = LIVE_POST_MS,
  ) {}

  add(part: Partial<LiveBatch>): void {
    if (part.attention) this.batch.attention = part.attention;
    this.batch.snapshots.push(...(part.snapshots ?? []));
    this.batch.telemetry.push(...(part.telemetry ?? []));
    if (this.timer) return;
    const wait = this.last + this.everyMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Drops the waiting attention (another was shown outright), or everything (a full state went out). */
  clear(what: 'attention' | 'all'): void {
    delete this.batch.attention;
    if (what === 'all') this.batch = { snapshots: [], telemetry: [] };
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const b = this.batch;
    this.batch = { snapshots: [], telemetry: [] };
    if (!b.attention && !b.snapshots.length && !b.telemetry.length) return;
    this.last = Date.now();
    this.post(b);
  }
}
