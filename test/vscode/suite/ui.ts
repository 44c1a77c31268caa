/**
 * Stands in for the user at VS Code's prompts: while `answer()` is active, the window's message,
 * quick-pick, input-box and file-dialog functions record what the extension asked and answer from
 * a script (the test bundle and the extension share one `vscode` API object, so the extension's
 * calls land here). Anything asked that the script does not answer is cancelled (undefined).
 */
import * as vscode from 'vscode';

export interface Asked {
  fn: string;
  /** The message, or the quick pick's title/placeholder, or the input box's title and prompt. */
  text: string;
  /** The buttons or the quick pick's item labels. */
  items: string[];
  /** The quick pick's item descriptions ('' where none). */
  descriptions: string[];
  /** A message shown as a modal dialog (`{ modal: true }`), which a person cannot miss. */
  modal?: true;
}

/**
 * Picks an answer for one prompt: a button or item label, an input box's text, or a dialog's path;
 * a quick pick with canPickMany takes several labels.
 */
export type Script = (asked: Asked) => string | string[] | undefined;

type Window = Record<string, unknown>;
const FUNCTIONS = [
  'showInformationMessage',
  'showWarningMessage',
  'showErrorMessage',
  'showQuickPick',
  'showInputBox',
  'showOpenDialog',
  'showSaveDialog',
] as const;

const labelOf = (item: unknown): string =>
  typeof item === 'string'
    ? item
    : ((item as { label?: string; title?: string }).label ?? (item as { title?: string }).title ?? '');

/** Answers the window's prompts with `script` until the returned function is called; `asked` lists every prompt. */
export function answer(script: Script): { asked: Asked[]; restore: () => void } {
  const w = vscode.window as unknown as Window;
  const saved = Object.fromEntries(FUNCTIONS.map((f) => [f, w[f]]));
  const asked: Asked[] = [];
  for (const fn of FUNCTIONS) {
    w[fn] = async (...args: unknown[]) => {
      if (fn === 'showQuickPick') {
        const given = (await args[0]) as unknown[];
        const items = given.map(labelOf);
        const descriptions = given.map((i) => (i as { description?: string }).description ?? '');
        const opts = (args[1] ?? {}) as { title?: string; placeHolder?: string; canPickMany?: boolean };
        const a = { fn, text: `${opts.title ?? ''} ${opts.placeHolder ?? ''}`.trim(), items, descriptions };
        asked.push(a);
        const pick = script(a);
        if (opts.canPickMany)
          return pick === undefined
            ? undefined
            : given.filter((i) => ([] as string[]).concat(pick).includes(labelOf(i)));
        return given.find((i) => labelOf(i) === pick);
      }
      if (fn === 'showInputBox') {
        const opts = (args[0] ?? {}) as { title?: string; prompt?: string };
        const a = { fn, text: `${opts.title ?? ''} ${opts.prompt ?? ''}`.trim(), items: [], descriptions: [] };
        asked.push(a);
        const text = script(a);
        return Array.isArray(text) ? text[0] : text;
      }
      if (fn === 'showOpenDialog' || fn === 'showSaveDialog') {
        const opts = (args[0] ?? {}) as { title?: string; openLabel?: string; saveLabel?: string };
        const label = opts.openLabel ?? opts.saveLabel ?? '';
        const a = { fn, text: `${opts.title ?? ''} ${label}`.trim(), items: [], descriptions: [] };
        asked.push(a);
        const answered = script(a);
        const p = Array.isArray(answered) ? answered[0] : answered;
        if (p === undefined) return undefined;
        return fn === 'showOpenDialog' ? [vscode.Uri.file(p)] : vscode.Uri.file(p);
      }
      const items = args.slice(1).filter((x) => typeof x === 'string' || (typeof x === 'object' && x && 'title' in x));
      const modal = args.some((x) => typeof x === 'object' && x !== null && (x as { modal?: unknown }).modal === true);
      const a: Asked = {
        fn,
        text: String(args[0]),
        items: items.map(labelOf),
        descriptions: [],
        ...(modal ? { modal: true as const } : {}),
      };
      asked.push(a);
      const pick = script(a);
      return items.find((i) => labelOf(i) === pick);
    };
  }
  // Progress: where it is shown is recorded (as the location's number); the work runs as usual.
  const withProgress = w['withProgress'] as (o: { location: unknown }, task: unknown) => unknown;
  w['withProgress'] = (o: { location: unknown }, task: unknown) => {
    asked.push({ fn: 'withProgress', text: String(o.location), items: [], descriptions: [] });
    return withProgress.call(vscode.window, o, task);
  };
  return { asked, restore: () => Object.assign(w, saved, { withProgress }) };
}
