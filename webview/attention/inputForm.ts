/**
 * The attention view's form, as BertViz users expect: type a source (and optionally a target;
 * otherwise the model decodes it), pick a checkpoint of the selected run (default: the newest), and
 * see all layers × heads. A run without a vocabulary (a PyTorch checkpoint folder) takes token ids.
 * It posts `inspectInput`; the extension asks the engine and sends the attention back.
 */
import type { InputPair } from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { h, poster } from '../common';
import { attentionPage } from '../../src/protocol/pages/attention';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(attentionPage);

/** Token ids typed as text: "5 6 7" (commas allowed), or why not. */
export function parseIds(text: string): number[] | string {
  const words = text
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  if (!words.length) return 'type token ids, e.g. 5 6 7';
  if (!words.every((w) => /^\d+$/.test(w))) return `this run has no vocabulary: type token ids, not “${text.trim()}”`;
  return words.map(Number);
}

export interface InputForm {
  el: HTMLElement;
  /** The selected run changed (its checkpoints, whether it reads text). */
  update(header: ViewHeader | null): void;
}

/**
 * The boxes' placeholders, for a run that reads text or only token ids; short, since a half-width
 * panel cut 'target (optional: decoded when empty)' mid-word (heads-roles.png): the target box's
 * title says the rest.
 */
const placeholders = (vocab: boolean): [string, string] =>
  vocab ? ['source sentence', 'target (optional)'] : ['source token ids, e.g. 5 6 7', 'target ids (optional)'];

export function inputForm(): InputForm {
  const src = h('input', { type: 'text', id: 'input-src', 'aria-label': 'source' });
  const tgt = h('input', {
    type: 'text',
    id: 'input-tgt',
    'aria-label': 'target',
    title: 'Left empty, the model decodes the target from the source',
  });
  [src.placeholder, tgt.placeholder] = placeholders(true);
  const step = h('select', { id: 'input-step', 'aria-label': 'checkpoint' });
  const show = h('button', { id: 'input-show', title: 'Attention of this pair at the chosen checkpoint' }, 'Show');
  const probe = h(
    'button',
    { id: 'input-probe', class: 'small', title: "The run's probe pair (it has a history over training)" },
    'Probe',
  );
  const why = h('span', { class: 'muted', id: 'input-why' });
  let vocab = true;
  /** The header's step when the box was last set from it (undefined: never). */
  let shownStep: number | null | undefined;
  /** The box's options as last built. */
  let shownOptions = '';
  /** The input pair the header named when the boxes were last set from it. */
  let shownPair: string | undefined;

  const chosenStep = (): number | undefined => (step.value === '' ? undefined : Number(step.value));
  const submit = (): void => {
    why.textContent = '';
    const s = src.value.trim();
    const t = tgt.value.trim();
    if (!s) {
      why.textContent = 'type a source sentence first';
      return;
    }
    let input: InputPair;
    if (vocab) input = { kind: 'text', src: s, ...(t ? { tgt: t } : {}) };
    else {
      const a = parseIds(s);
      const b = t ? parseIds(t) : undefined;
      if (typeof a === 'string' || typeof b === 'string') {
        why.textContent = typeof a === 'string' ? a : (b as string);
        return;
      }
      input = { kind: 'ids', src: a, ...(b ? { tgt: b } : {}) };
    }
    const at = chosenStep();
    ask({ type: 'inspectInput', input, ...(at !== undefined ? { step: at } : {}) });
  };
  show.addEventListener('click', submit);
  for (const box of [src, tgt]) box.addEventListener('keydown', (e) => e.key === 'Enter' && submit());
  probe.addEventListener('click', () => {
    const at = chosenStep();
    ask({ type: 'inspectInput', input: { kind: 'probe' }, ...(at !== undefined ? { step: at } : {}) });
  });

  const el = h('div', { class: 'form', id: 'input-form' }, src, tgt, h('label', {}, 'at ', step), show, probe, why);
  return {
    el,
    update(header) {
      const disabled = !header;
      for (const x of [src, tgt, step, show, probe]) x.disabled = disabled;
      vocab = header?.vocab ?? true;
      [src.placeholder, tgt.placeholder] = placeholders(vocab);
      // The box names the checkpoint the view shows (the header's step; "newest" only when none is
      // chosen), unless the user picked another since that step was shown.
      const shown = header?.step ?? null;
      const keep = shown === shownStep ? step.value : shown === null ? '' : String(shown);
      shownStep = shown;
      const newest = header?.checkpoints.length ? Math.max(...header.checkpoints) : undefined;
      const steps = header ? [...header.checkpoints] : [];
      if (shown !== null && !steps.includes(shown)) steps.push(shown); // a snapshot's step between checkpoints
      const options = [
        newest !== undefined ? `newest checkpoint (${newest})` : 'newest checkpoint',
        ...steps.sort((a, b) => b - a),
      ];
      if (options.join('\n') !== shownOptions) {
        // Rebuilt only when the checkpoints change: a live run redraws the view every snapshot.
        shownOptions = options.join('\n');
        step.replaceChildren(
          h('option', { value: '' }, String(options[0])),
          ...steps.map((s) => h('option', { value: String(s) }, `step ${s}`)),
        );
      }
      step.value = steps.map(String).includes(keep) ? keep : '';
      // The boxes follow the pair the view shows each time it changes (one typed, or opened from
      // another view), and otherwise keep what is typed in them; the probe leaves them as they are.
      const pair = header ? JSON.stringify([header.runDir, header.input, header.target ?? null]) : undefined;
      if (header && pair !== shownPair && header.input !== 'probe') {
        src.value = header.input;
        tgt.value = header.target ?? '';
      }
      shownPair = pair;
    },
  };
}
