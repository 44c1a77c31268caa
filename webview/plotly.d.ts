// The subset of plotly.js this bundle uses. plotly is loaded by its own <script> (the minified
// dist from node_modules, through asWebviewUri) and read from the global `Plotly`: bundling it
// again per panel would add 4.6 MB each.
declare namespace Plotly {
  type Datum = number | string | null;
  type Data = Record<string, unknown>;
  type Layout = Record<string, unknown>;
  type Config = Record<string, unknown>;
  interface PlotlyHTMLElement extends HTMLElement {
    data?: Data[];
    layout?: Layout;
    on(event: string, handler: (e: unknown) => void): void;
  }
  function react(root: HTMLElement, data: Data[], layout?: Layout, config?: Config): Promise<PlotlyHTMLElement>;
  function purge(root: HTMLElement): void;
  function relayout(root: HTMLElement, update: Layout): Promise<PlotlyHTMLElement>;
  function toImage(
    root: HTMLElement,
    opts: { format: 'png' | 'svg'; width?: number; height?: number },
  ): Promise<string>;
  namespace Plots {
    function resize(root: HTMLElement): Promise<void>;
  }
}
