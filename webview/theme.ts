/**
 * The panels' colours and chart styling: VS Code's theme variables read into a `Theme`, a watch for
 * theme switches, and the plotly layout and config every chart starts from (re-exported by common.ts).
 */
export interface Theme {
  fg: string;
  bg: string;
  muted: string;
  grid: string;
  accent: string;
  accent2: string;
  accent3: string;
  font: string;
  fontSize: number;
  dark: boolean;
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const v = style.getPropertyValue(name).trim();
  return v || fallback;
}

/** Colours from VS Code's theme variables (set on <html> by VS Code; defaults for a bare page). */
export function readTheme(): Theme {
  const s = getComputedStyle(document.documentElement);
  const dark =
    !document.body.classList.contains('vscode-light') &&
    !document.body.classList.contains('vscode-high-contrast-light');
  return {
    fg: cssVar(s, '--vscode-editor-foreground', dark ? '#cccccc' : '#333333'),
    bg: cssVar(s, '--vscode-editor-background', dark ? '#1e1e1e' : '#ffffff'),
    muted: cssVar(s, '--vscode-descriptionForeground', dark ? '#9d9d9d' : '#717171'),
    grid: cssVar(s, '--vscode-editorWidget-border', dark ? '#454545' : '#c8c8c8'),
    accent: cssVar(s, '--vscode-charts-blue', '#3794ff'),
    accent2: cssVar(s, '--vscode-charts-orange', '#d18616'),
    accent3: cssVar(s, '--vscode-charts-green', '#89d185'),
    font: cssVar(s, '--vscode-font-family', 'system-ui, sans-serif'),
    fontSize: parseFloat(cssVar(s, '--vscode-font-size', '13')) || 13,
    dark,
  };
}

/** Calls `onChange` when VS Code switches theme (it rewrites <html style> and <body class>). */
export function watchTheme(onChange: () => void): void {
  const obs = new MutationObserver(() => onChange());
  obs.observe(document.documentElement, { attributes: true, attributeFilter: ['style'] });
  obs.observe(document.body, { attributes: true, attributeFilter: ['class'] });
}

/** A plotly layout in the theme's colours; `uirevision` fixed so zoom survives updates. */
export function themedLayout(t: Theme, uirevision: string, extra: Plotly.Layout = {}): Plotly.Layout {
  const axis = { color: t.fg, gridcolor: t.grid, zerolinecolor: t.grid, linecolor: t.grid, automargin: true };
  const ex = extra as Record<string, Record<string, unknown> | undefined>;
  return {
    paper_bgcolor: t.bg,
    plot_bgcolor: t.bg,
    font: { color: t.fg, family: t.font, size: t.fontSize - 1 },
    margin: { l: 56, r: 16, t: 32, b: 40 },
    // Just above the plot area, whatever its height (at y 1.12 a short chart's legend covered its top).
    legend: { orientation: 'h', x: 0, y: 1, yanchor: 'bottom', font: { color: t.fg } },
    hoverlabel: { bgcolor: t.bg, bordercolor: t.grid, font: { color: t.fg } },
    ...extra,
    xaxis: { ...axis, ...(ex.xaxis ?? {}) },
    yaxis: { ...axis, ...(ex.yaxis ?? {}) },
    uirevision,
  };
}

export const PLOTLY_CONFIG: Plotly.Config = {
  displaylogo: false,
  responsive: true,
  // The modebar's download button uses <a download>, which a webview ignores: panels export
  // through the extension (`export` message) instead.
  modeBarButtonsToRemove: ['toImage', 'sendDataToCloud', 'lasso2d', 'select2d'],
};
