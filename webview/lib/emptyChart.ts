/**
 * A plotly chart with nothing to draw says so: no trace has a point, so its axes are hidden (plotly
 * would draw a made-up −1…6 by −1…4 grid) and `text` is written in the middle of the chart.
 */
export function emptyChartLayout(
  data: Plotly.Data[],
  layout: Plotly.Layout,
  text: string,
  color: string,
): Plotly.Layout {
  const points = (data as { x?: ArrayLike<unknown> }[]).some((d) => (d.x?.length ?? 0) > 0);
  if (points) return layout;
  const note = { text, xref: 'paper', yref: 'paper', x: 0.5, y: 0.5, showarrow: false, font: { color } };
  return {
    ...layout,
    xaxis: { ...(layout.xaxis ?? {}), visible: false },
    yaxis: { ...(layout.yaxis ?? {}), visible: false },
    shapes: [],
    annotations: [note],
  };
}
