/**
 * What an error says to a user: its message, or the value itself for a throw of something else. A
 * leaf that every room of the extension imports downward (ctx.ts's commands, the viewer, the
 * follower), so none of them imports another for it.
 */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
