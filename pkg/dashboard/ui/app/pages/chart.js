// uPlot, loaded on demand: durations of queries in seconds, oldest to newest.
import uPlot from 'uplot';

export function durationPlot(el, queries) {
  const xs = queries.map((_, i) => i + 1);
  const ys = queries.map(
    (q) => (Date.parse(q.status.completionTime) - Date.parse(q.status.startTime)) / 1000,
  );
  const css = getComputedStyle(document.documentElement);
  const stroke = css.getPropertyValue('--accent').trim() || '#1f5fbf';
  const axis = {
    stroke: css.getPropertyValue('--muted').trim() || '#5b6570',
    grid: { stroke: 'rgba(128,128,128,0.15)' },
  };
  return new uPlot(
    {
      width: Math.min(el.clientWidth || 600, 900),
      height: 160,
      legend: { show: false },
      scales: { x: { time: false } },
      axes: [
        { ...axis, label: 'query (oldest → newest)' },
        { ...axis, label: 'seconds' },
      ],
      series: [{}, { label: 'duration', stroke, width: 2, points: { show: true } }],
    },
    [xs, ys],
    el,
  );
}
