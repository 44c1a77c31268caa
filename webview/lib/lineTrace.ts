/**
 * A metric over steps as a plotly line (the dashboard's and the run report's curves alike). Pure.
 */
/** `s` as a line named `name`, its hover saying the step and the value. */
export const lineTrace = (
  s: { x: number[]; y: number[] },
  name: string,
  color: string,
  extra: Plotly.Data = {},
): Plotly.Data => ({
  type: 'scatter',
  mode: 'lines',
  x: s.x,
  y: s.y,
  name,
  line: { color, width: 1.5 },
  hovertemplate: `step %{x}<br>${name} %{y:.4g}<extra></extra>`,
  ...extra,
});
