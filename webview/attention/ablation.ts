/**
 * The attention view's head switches (issue 13): heads the user switched off, zero- or
 * mean-ablated, and what that does to the input shown: each target token's log-prob with the model
 * as trained and with the heads off, the change, and the greedy output with the heads off.
 */
import { ABLATION_MODES, type AblationEffect, type AblationMode } from '../../src/protocol/ablation';
import { h, poster } from '../common';
import { attentionPage } from '../../src/protocol/pages/attention';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const toPanel = poster(attentionPage);

export interface AblationCard {
  el: HTMLElement;
  /** Heads off now (what the thumbnails mark). */
  off(): string[];
  /** Switches a head off, or on again, and asks the extension for the effect. */
  toggle(head: string): void;
  /** What the extension computed (null: all heads on). */
  show(effect: AblationEffect | null): void;
}

export function ablationCard(onChange: () => void): AblationCard {
  let heads: string[] = [];
  let mode: AblationMode = 'zero';
  let effect: AblationEffect | null = null;
  const status = h('span', { class: 'muted', id: 'ablation-status' });
  const chips = h('span', { id: 'ablated-heads' });
  const modeSel = h('select', { id: 'ablation-mode', 'aria-label': 'ablation mode' });
  for (const m of ABLATION_MODES)
    modeSel.append(h('option', { value: m }, m === 'zero' ? 'zero (output removed)' : 'mean (mean output)'));
  const clear = h('button', { class: 'small' }, 'All On');
  const table = h('table', { id: 'ablation-table' });
  const output = h('div', { id: 'ablation-output' });
  const el = h(
    'section',
    { class: 'card', id: 'ablation-card', hidden: '' },
    h('header', {}, h('h2', {}, 'Heads switched off'), h('span', { class: 'actions' }, modeSel, clear)),
    h('div', {}, chips, ' ', status),
    output,
    table,
  );

  const ask = () => {
    status.textContent = heads.length ? 'computing…' : '';
    toPanel({ type: 'ablateHeads', ablation: { heads, mode } });
    draw();
    onChange();
  };
  modeSel.addEventListener('change', () => {
    mode = modeSel.value as AblationMode;
    if (heads.length) ask();
  });
  clear.addEventListener('click', () => {
    heads = [];
    ask();
  });

  function draw(): void {
    el.hidden = heads.length === 0 && !effect;
    chips.replaceChildren(
      ...heads.map((id) => {
        const chip = h('button', { class: 'small', title: `Switch ${id} back on` }, `${id} ✕`);
        chip.addEventListener('click', () => card.toggle(id));
        return chip;
      }),
    );
    table.replaceChildren();
    output.replaceChildren();
    if (!effect) return;
    const e = effect;
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    output.append(
      h('div', {}, `At step ${e.step}, greedy output with ${e.ablation.heads.join(', ')} ${e.ablation.mode}-ablated: `),
      h('code', {}, e.output.text || '(empty)'),
      h(
        'div',
        { class: 'muted' },
        `log P of the target: ${sum(e.intact).toFixed(3)} as trained, ${sum(e.ablated).toFixed(3)} with the heads off`,
      ),
    );
    table.append(
      h('tr', {}, h('th', {}, 'predicts'), h('th', {}, 'log p'), h('th', {}, 'heads off'), h('th', {}, 'change')),
    );
    e.tgtTokens.forEach((_, t) => {
      const next = t + 1 < e.tgtTokens.length ? e.tgtTokens[t + 1]! : '</s>';
      const d = e.ablated[t]! - e.intact[t]!;
      const cls = d < -1e-3 ? 'worse' : d > 1e-3 ? 'better' : '';
      table.append(
        h(
          'tr',
          { 'data-delta': d.toFixed(4) },
          h('td', {}, next), // textContent: a token such as <s> stays text
          h('td', {}, e.intact[t]!.toFixed(3)),
          h('td', {}, e.ablated[t]!.toFixed(3)),
          h('td', { class: cls }, `${d >= 0 ? '+' : ''}${d.toFixed(3)}`),
        ),
      );
    });
  }

  const card: AblationCard = {
    el,
    off: () => heads,
    toggle(head) {
      heads = heads.includes(head) ? heads.filter((x) => x !== head) : [...heads, head];
      ask();
    },
    show(next) {
      effect = next;
      // What the extension holds is the truth: its effect's heads, or none (all on, or a new input).
      heads = next ? [...next.ablation.heads] : [];
      if (next) {
        mode = next.ablation.mode;
        modeSel.value = mode;
      }
      status.textContent = '';
      draw();
    },
  };
  return card;
}
