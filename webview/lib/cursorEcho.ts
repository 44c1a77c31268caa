/**
 * The step cursor a page moves comes back from the extension: every `cursor` the page posts is
 * answered, in order, by a `cursor` and a `state` carrying that step, a round trip later. A page
 * that obeyed each answer moved back to steps the user had already left (arrow presses were lost,
 * a drag replayed itself for seconds after release). This tells an answer to an older step (drop
 * it: the user's newest choice wins) from a move made elsewhere (the dashboard clicked: follow it).
 *
 * The extension answers in the order it was asked, so once the answer to a sent step arrives, no
 * answer to an earlier one follows; before the first answer, what arrives was sent before the
 * extension saw the page's move. A page whose moves are not answered within STALE_MS (the
 * extension snapped the step to a snapshot, or had no run) stops waiting.
 */
export const STALE_MS = 3000;

export class CursorEcho {
  /** Steps posted whose answers have not all come, oldest first; [0] answered once `answered`. */
  private sent: number[] = [];
  private answered = false;
  private lastSent = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The page posted `step` (the user moved the slider). */
  posted(step: number): void {
    this.sent.push(step);
    this.lastSent = this.now();
  }

  /** The extension says the cursor is at `step` (null: the newest): whether the page should go there. */
  accept(step: number | null): boolean {
    if (!this.sent.length) return true;
    if (this.now() - this.lastSent > STALE_MS) return this.forget();
    const i = step === null ? -1 : this.sent.indexOf(step);
    if (i < 0) return this.answered ? this.forget() : false; // moved elsewhere, or sent before our first move
    this.sent = this.sent.slice(i);
    this.answered = true;
    return this.sent.length === 1 ? this.forget() : false; // an answer to a step the user has left
  }

  private forget(): true {
    this.sent = [];
    this.answered = false;
    return true;
  }
}
