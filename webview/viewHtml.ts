/**
 * A panel's view as one self-contained HTML file (issue 33 item 2: every panel's "HTML" export):
 * its header (run, step, input) as text and what it shows now, static. Each drawn canvas becomes an
 * <img> whose data: URL holds its pixels, each plotly chart its SVG inlined, the page's styles and
 * the current theme's colours (VS Code's variables on <html>, its class on <body>) come along, and
 * a CSP of `default-src 'none'` lets it load nothing: no script, no plotly, no network. Built here
 * once for every page; common.ts's `start` answers Export View's `html` with it.
 */

/** A plotly chart as SVG markup (its `Plotly.toImage` SVG), or undefined when it could not be drawn. */
export type ChartSvg = (el: HTMLElement) => Promise<string | undefined>;

/** What the file may load: images and fonts only from data: URLs, styles only inline. */
export const VIEW_HTML_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:";

const escapeAttr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `name="value"` for each attribute of `el` (the theme rides on <html style> and <body class>). */
const attrsOf = (el: Element): string => [...el.attributes].map((a) => ` ${a.name}="${escapeAttr(a.value)}"`).join('');

/** Pairs an element's descendants matching `sel` with its clone's (cloneNode keeps their order). */
function pairs<E extends Element>(orig: Element, copy: Element, sel: string): [E, E][] {
  const a = orig.querySelectorAll<E>(sel);
  const b = copy.querySelectorAll<E>(sel);
  return [...a].map((el, i) => [el, b[i]!]);
}

/** Every rule of the page's style sheets as text (plotly inserts its rules without text nodes). */
function pageCss(): string {
  const out: string[] = [];
  for (const sheet of [...document.styleSheets]) {
    try {
      for (const rule of [...sheet.cssRules]) out.push(rule.cssText);
    } catch {
      // a sheet of another origin cannot be read; the file would not load it anyway
    }
  }
  return out.join('\n').replace(/<\/style/gi, '<\\/style');
}

/** A canvas as an <img> of its pixels, at the size it is shown. */
function canvasImage(c: HTMLCanvasElement): HTMLImageElement {
  const img = document.createElement('img');
  for (const a of [...c.attributes]) if (a.name !== 'width' && a.name !== 'height') img.setAttribute(a.name, a.value);
  img.src = c.toDataURL('image/png');
  img.dataset.from = 'canvas';
  const r = c.getBoundingClientRect();
  img.style.width = `${r.width > 0 ? r.width : c.width}px`;
  img.style.height = `${r.height > 0 ? r.height : c.height}px`;
  return img;
}

/** Freezes a clone's form controls as they are shown (cloneNode copies attributes, not values). */
function freezeControls(orig: Element, copy: Element): void {
  for (const [a, b] of pairs<HTMLInputElement>(orig, copy, 'input, textarea')) {
    if (a.type === 'checkbox' || a.type === 'radio') b.toggleAttribute('checked', a.checked);
    else if (a instanceof HTMLTextAreaElement) b.textContent = a.value;
    else b.setAttribute('value', a.value);
  }
  for (const [a, b] of pairs<HTMLSelectElement>(orig, copy, 'select'))
    [...b.options].forEach((o, i) => o.toggleAttribute('selected', i === a.selectedIndex));
  for (const el of copy.querySelectorAll('button, input, select, textarea')) el.setAttribute('disabled', '');
  for (const el of copy.querySelectorAll('script')) el.remove();
}

/** A copy of `el` as shown: canvases as images, charts as their SVG, controls frozen. */
async function staticCopy(el: HTMLElement, chartSvg: ChartSvg): Promise<HTMLElement> {
  const copy = el.cloneNode(true) as HTMLElement;
  const charts = pairs<HTMLElement>(el, copy, '.js-plotly-plot');
  for (const [a, b] of pairs<HTMLCanvasElement>(el, copy, 'canvas')) {
    if (a.closest('.js-plotly-plot')) continue; // plotly's own canvases go with its SVG
    if (a.width > 0 && a.height > 0) b.replaceWith(canvasImage(a));
    else b.remove();
  }
  freezeControls(el, copy);
  for (const [a, b] of charts) {
    const svg = await chartSvg(a);
    b.replaceChildren();
    if (svg === undefined) b.textContent = '(this chart could not be drawn)';
    else b.innerHTML = svg;
    b.dataset.from = 'plotly';
  }
  return copy;
}

/** The view as one self-contained HTML file's text: what the page shows now, in its theme. */
export async function viewHtml(chartSvg: ChartSvg): Promise<string> {
  const shown = ['view-header', 'app'].map((id) => document.getElementById(id)).filter((e) => e !== null);
  const copies = await Promise.all(shown.map((el) => staticCopy(el, chartSvg)));
  const title = document.getElementById('view-header')?.textContent?.trim() || document.title;
  const when = new Date().toISOString().replace('T', ' ').slice(0, 16);
  const footer = document.createElement('footer');
  footer.className = 'muted exported-note';
  footer.textContent = `Exported from Attention Debugger (${when} UTC): a static copy of the view, no scripts, nothing loaded.`;
  return `<!DOCTYPE html>
<html${attrsOf(document.documentElement)}>
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(VIEW_HTML_CSP)}">
<title>${escapeAttr(title)}</title>
<style>
${pageCss()}
.exported-note { margin: 12px 0; font-size: 0.9em; }
</style>
</head>
<body${attrsOf(document.body)}>
${copies.map((c) => c.outerHTML).join('\n')}
${footer.outerHTML}
</body>
</html>
`;
}
