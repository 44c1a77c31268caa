/**
 * The attention view's value-weighted toggle (issue 32 item 1): a checkbox in the grid's toolbar
 * and the caption beside it, which says what the views draw and the colour scale's range. On, the
 * grid, the large head and the head view draw ‖α·vW^O‖ (the maps' `valueWeighted`); an attention
 * without them is asked for once (`showValueWeighted` with an id; the panel answers `valueWeighted`
 * and keeps them beside the weights). Norms are not in [0, 1]: each map is coloured from 0 to its own
 * largest (per map), or with the scale box from 0 to the largest of the whole view (per view).
 */
import type { Attention } from '../../src/protocol/attention';
import type { ValueWeightedMsg } from '../../src/protocol/pages/attention';
import { h, loadState } from '../common';
import { hasNorms, normsOf, VALUE_WEIGHTED_CAPTION, viewMax } from '../lib/valueWeighted';

/** What the views draw of an attention. */
export interface Shown {
  /** The attention, or its norms in place of its weights. */
  a: Attention;
  /** The norms are drawn. */
  vw: boolean;
  /** The colour scale's top when one scale covers the view: 1 for weights, the largest norm for norms. */
  top: number;
}

/** The run, step and pair of an attention: a reply of another is not this one's norms. */
const keyOf = (p: Attention) =>
  JSON.stringify([p.source.runDir, p.source.step, p.source.input, p.srcTokens, p.tgtTokens]);

export function valueWeightedToggle(o: {
  /** Posts `showValueWeighted`. */
  ask: (on: boolean, id: number) => void;
  /** The attention shown now (the payload, with weights). */
  current: () => Attention | null;
  /** The toggle moved: save it and redraw. */
  changed: () => void;
}) {
  const box = h('input', { type: 'checkbox', id: 'value-weighted' });
  box.checked = loadState()?.valueWeighted ?? false;
  const caption = h('span', { class: 'muted', id: 'measure' });
  let id = 0;
  /** The attention whose norms were last asked for, and why the last answer had none. */
  let asked = '';
  let error: { key: string; text: string } | null = null;
  const askFor = (p: Attention | null) => {
    asked = p ? keyOf(p) : '';
    o.ask(box.checked, ++id);
  };
  box.addEventListener('change', () => {
    error = null;
    askFor(box.checked ? o.current() : null); // off too: the panel tells the head inspector
    o.changed();
  });
  const el = h(
    'label',
    { title: 'Draw value-weighted attention ‖α_ij · v_j W^O_h‖ (Kobayashi et al., 2020) instead of the weights α' },
    box,
    ` ${VALUE_WEIGHTED_CAPTION}`,
  );

  /** What to draw of `p`, saying so in the caption; asks for its norms when they are wanted and missing. */
  function shown(p: Attention, absolute: boolean): Shown {
    const scale = (top: string, per: string) =>
      absolute ? `colour 0 to ${top} (${per})` : "colour 0 to each map's largest (per map)";
    const weights = (why: string): Shown => {
      caption.textContent = `${why}weights α · ${scale('1', 'every map')}`;
      return { a: p, vw: false, top: 1 };
    };
    if (!box.checked) return weights('');
    if (hasNorms(p)) {
      const a = normsOf(p);
      const top = viewMax(a);
      caption.textContent =
        `${VALUE_WEIGHTED_CAPTION} · ${scale(top.toPrecision(3), 'the largest in the view: per view')}` +
        ' · the across-heads rows average the weights';
      return { a, vw: true, top };
    }
    const key = keyOf(p);
    if (p.maps.some((m) => m.pool))
      return weights(`${VALUE_WEIGHTED_CAPTION} needs inputs of at most 256 tokens a side: `);
    if (error?.key === key) return weights(`${VALUE_WEIGHTED_CAPTION}: ${error.text} · `);
    if (asked !== key) askFor(p);
    return weights(`${VALUE_WEIGHTED_CAPTION}: asking the engine… · `);
  }

  /** The panel's answer to request `m.id`: the attention to show now (`p`, or `p` with its norms). */
  function answer(m: ValueWeightedMsg, p: Attention | null): Attention | null {
    if (m.id !== id || !p) return p; // an answer to a request since overtaken
    if (m.attention && keyOf(m.attention) === keyOf(p)) return m.attention;
    if (m.attention) error = { key: keyOf(p), text: `the engine answered for step ${m.attention.source.step}` };
    else if (m.error) error = { key: keyOf(p), text: m.error };
    return p;
  }

  return {
    el,
    caption,
    shown,
    answer,
    get on(): boolean {
      return box.checked;
    },
    set on(v: boolean) {
      box.checked = v;
    },
  };
}
