/**
 * The head inspector's score decomposition (issue 32 item 2): a query row chosen (a click on a row
 * of the map, or the query field) is asked of the engine through the panel (`requestScores` with an
 * id → heads/scores → `headScores` with the same id), and each key's pre-softmax score
 * q_i·k_j/√d_k is shown split into its parts: the bias terms, the head's largest d_k dimensions,
 * and in layer 0's self-attention of a post-LN model token·token, token·position, position·token and
 * position·position (elsewhere the engine's note says why not). A bar per key draws the score; the
 * Σ columns add each split back, and each equals the score. Colours are the theme's CSS variables.
 */
import type { HeadRef } from '../../src/protocol/attention';
import { headId } from '../../src/protocol/attention';
import type { HeadScores } from '../../src/protocol/headScores';
import type { HeadScoresMsg, RequestScoresMsg } from '../../src/protocol/pages/head';
import { h } from '../common';

type Ask = (m: Omit<RequestScoresMsg, 'v' | 'type'>) => void;

const num = (x: number) => x.toFixed(4);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The parts each split is made of, per key, with their column names. */
function splits(r: HeadScores, j: number): { name: string; title: string; parts: number[] }[] {
  const b = r.bias;
  const bias = [b.input[j]!, b.queryBiasKey[j]!, b.queryKeyBias[j]!, b.biasBias];
  const out = [{ name: 'Σ bias', title: 'x·x + b^Q·k + q·b^K + b^Q·b^K', parts: bias }];
  out.push({ name: 'Σ d_k', title: `the ${r.dk} dimensions q[m]·k[m]/√d_k`, parts: r.dimensions[j]! });
  const e = r.embedding;
  if (e) {
    const emb = [e.tokenToken[j]!, e.tokenPosition[j]!, e.positionToken[j]!, e.positionPosition[j]!];
    out.push({
      name: 'Σ emb',
      title: 'tok·tok + tok·pos + pos·tok + pos·pos + the bias terms',
      parts: [...emb, ...bias.slice(1)],
    });
  }
  return out;
}

export function scoresCard(ask: Ask) {
  const query = h('input', { type: 'number', id: 'score-query', min: '0', value: '0', style: 'width:5em' });
  const go = h('button', { class: 'small', id: 'score-ask' }, 'Split');
  const caption = h(
    'div',
    { class: 'muted', id: 'score-caption' },
    'Click a query row of the map (or name one) to split its scores',
  );
  const note = h('div', { class: 'muted', id: 'score-note' });
  const table = h('table', { id: 'score-table' });
  let id = 0;
  let asked: { ref: HeadRef; query: number; run: string; input: string } | null = null;
  let target: (() => { ref: HeadRef; run: string; input: string } | null) | null = null;

  /** Asks for `query` of the head shown (`of`: the head, run and input the page shows). */
  function request(q: number, of: { ref: HeadRef; run: string; input: string }): void {
    asked = { ...of, query: q };
    query.value = String(q);
    id++;
    caption.textContent = `asking the engine for ${headId(of.ref)} query ${q}…`;
    ask({ id, ...of.ref, query: q });
  }
  go.addEventListener('click', () => {
    const of = target?.();
    if (of) request(Math.max(0, Math.floor(Number(query.value) || 0)), of);
  });

  /** The panel's answer to request `m.id`: the table, or why there is none. */
  function show(m: HeadScoresMsg): void {
    if (m.id !== id || !asked) return; // overtaken by a newer request
    if (!m.scores) {
      caption.textContent = `${headId(asked.ref)} query ${asked.query}: ${m.error ?? 'no answer'}`;
      table.replaceChildren();
      note.textContent = '';
      return;
    }
    const r = m.scores;
    caption.textContent =
      `run ${asked.run} · step ${r.step} · input ${asked.input} · head ${headId(r)} · ` +
      `query ${r.query} “${r.queryToken}” · d_k ${r.dk} · scores q·k/√d_k`;
    note.textContent =
      r.embeddingNote ?? 'Layer 0 self-attention, post-LN: the input term splits into token and position terms.';
    table.replaceChildren(...rows(r));
    table.dataset.query = String(r.query);
  }

  const el = h(
    'section',
    { class: 'card', id: 'scores', style: 'grid-column: 1 / -1' }, // the whole row: the table is wide
    h(
      'header',
      {},
      h('h2', {}, 'Why this row: each key’s score split'),
      h('span', { class: 'actions' }, h('label', { for: 'score-query' }, 'query '), query, go),
    ),
    caption,
    note,
    h('div', { style: 'overflow-x:auto' }, table),
  );
  return {
    el,
    request,
    show,
    /** What the Split button asks for: the head, run and input shown. */
    target(f: () => { ref: HeadRef; run: string; input: string } | null): void {
      target = f;
    },
  };
}

/** The table: a row per key, its score and bar, its weight, its terms, its top dimensions, and each split's sum. */
function rows(r: HeadScores): HTMLElement[] {
  const e = r.embedding;
  const top = Math.max(1e-12, ...r.scores.map(Math.abs));
  const heads = ['key', 'score', '', 'weight', 'x·x', 'b^Q·k', 'q·b^K', 'b^Q·b^K'];
  if (e) heads.push('tok·tok', 'tok·pos', 'pos·tok', 'pos·pos');
  heads.push('top d_k dimensions', ...splits(r, 0).map((s) => s.name));
  const out = [h('tr', {}, ...heads.map((t) => h('th', {}, t)))];
  r.keyTokens.forEach((tok, j) => {
    const score = r.scores[j]!;
    const bar = h('span', {
      class: 'score-bar',
      style:
        `display:inline-block;height:0.8em;width:${Math.round((60 * Math.abs(score)) / top)}px;` +
        `background:var(${score >= 0 ? '--vscode-charts-blue' : '--vscode-charts-red'}, ${score >= 0 ? '#3794ff' : '#f14c4c'})`,
    });
    const b = r.bias;
    const cells = [b.input[j]!, b.queryBiasKey[j]!, b.queryKeyBias[j]!, b.biasBias];
    if (e) cells.push(e.tokenToken[j]!, e.tokenPosition[j]!, e.positionToken[j]!, e.positionPosition[j]!);
    const dims = r.topDimensions[j]!.map((d) => `d${d.dim} ${d.value >= 0 ? '+' : ''}${d.value.toFixed(3)}`).join(', ');
    const sums = splits(r, j).map((s) => {
      const total = sum(s.parts);
      return h('td', { title: s.title, 'data-sum': s.name, 'data-value': String(total) }, num(total));
    });
    const row = h(
      'tr',
      { 'data-key': String(j), 'data-score': String(score), class: r.masked[j] ? 'muted' : '' },
      h('td', {}, `${tok} ‹${j}›`),
      h('td', {}, num(score)),
      h('td', {}, bar),
      h('td', {}, r.masked[j] ? 'masked' : r.weights[j]!.toFixed(3)),
      ...cells.map((x) => h('td', {}, num(x))),
      h('td', { title: dims }, dims),
      ...sums,
    );
    out.push(row);
  });
  return out;
}
