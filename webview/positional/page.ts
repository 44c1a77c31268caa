/** Positional encoding view: the PE matrix (positions × d_model) as a diverging heatmap. */
import { type PositionalToPage, positionalPage } from '../../src/protocol/pages/positional';
import type { PositionalPayload, ViewHeader } from '../../src/protocol/webview';
import {
  PLOTLY_CONFIG,
  app,
  h,
  imageButton,
  plotly,
  post,
  purgeOnUnload,
  readTheme,
  renderHeader,
  shownHeader,
  start,
  themedLayout,
  watchTheme,
} from '../common';
import { positionalCsv } from '../../src/protocol/export';

/** plotly heatmaps lag past ~500 × 500 cells: show every n-th row/column beyond this. */
const MAX_SIDE = 256;

let pe: PositionalPayload | null = null;
let header: ViewHeader | null = null;
const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('span', { class: 'muted', id: 'status' }, 'Waiting for the positional encoding…');
const chart = h('div', { class: 'chart tall', id: 'pe' });

function picks(n: number): number[] {
  if (n <= MAX_SIDE) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: MAX_SIDE }, (_, i) => Math.round((i * (n - 1)) / (MAX_SIDE - 1)));
}

function draw(): void {
  renderHeader(headerEl, header, { note: 'positional encoding of §3.5' });
  if (!pe) return;
  const [positions, dModel] = pe.shape;
  const rows = picks(positions);
  const cols = picks(dModel);
  const z = rows.map((r) => cols.map((c) => pe!.values[r * dModel + c]));
  const t = readTheme();
  status.textContent = `${positions} positions × d_model ${dModel}${rows.length < positions || cols.length < dModel ? ` (every ${Math.ceil(positions / rows.length)}th row/column shown)` : ''}`;
  void plotly(() =>
    Plotly.react(
      chart,
      [
        {
          type: 'heatmap',
          z,
          x: cols,
          y: rows,
          colorscale: 'RdBu',
          zmid: 0,
          reversescale: true,
          hovertemplate: 'pos %{y}<br>dim %{x}<br>%{z:.4f}<extra></extra>',
          colorbar: { tickfont: { color: t.fg } },
        },
      ],
      themedLayout(t, 'pe', {
        xaxis: { title: { text: 'dimension i' } },
        yaxis: { title: { text: 'position' }, autorange: 'reversed' },
      }),
      PLOTLY_CONFIG,
    ),
  );
}

/** The matrix as an image. */
async function peImage(format: 'png' | 'svg'): Promise<{ dataUrl: string; name: string } | string> {
  if (!pe) return 'no positional encoding is shown yet';
  const dataUrl = await plotly(() => Plotly.toImage(chart, { format, width: 1000, height: 700 }));
  return dataUrl ? { dataUrl, name: `positional.${format}` } : 'plotly could not draw the matrix';
}

function layoutPage(): void {
  const png = imageButton('png', peImage);
  const csv = h('button', { class: 'small' }, 'CSV');
  csv.addEventListener('click', () => {
    if (pe)
      post({
        type: 'export',
        format: 'csv',
        name: 'positional.csv',
        text: positionalCsv(pe.shape, pe.values, header ? { run: header.runDir } : {}),
      });
  });
  app().append(
    h('div', { class: 'toolbar' }, status, h('span', { class: 'spacer' }), png, csv, imageButton('html')),
    h('section', { class: 'card' }, chart),
  );
  purgeOnUnload(chart);
}

function handle(m: PositionalToPage): void {
  switch (m.type) {
    case 'positional':
      pe = { shape: m.shape, values: m.values };
      break;
    case 'state':
      pe = m.state.positional;
      header = m.state.header;
      break;
    default:
      throw new Error(`the positional view does not show ${(m as { type: string }).type} messages`);
  }
  draw();
}

layoutPage();
watchTheme(draw);
start(positionalPage, handle, peImage, () => ({
  ...shownHeader(headerEl),
  maps: [],
  head: null,
  frames: pe ? 1 : 0,
  marks: [],
  colors: [],
}));
