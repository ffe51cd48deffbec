import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { AnalyticsRow } from './api/types';

/**
 * The analytics chart (uPlot, loaded only on the screens that draw one): views, adds, feed
 * fetches and RSVPs per UTC day, as wide as its box: it is drawn again at the box's new
 * width when that changes (a phone turned, a window resized). Returns what removes it.
 */
export function drawDaily(target: HTMLElement, rows: AnalyticsRow[], range: { from: string; to: string }): () => void {
  const widthOf = () => Math.max(260, target.clientWidth);
  // The API lists the days that have counts: every other day of the range is a zero.
  const byDay = new Map(rows.map((r) => [r.date, r]));
  const days: number[] = [];
  const end = Date.parse(`${range.to}T00:00:00Z`);
  for (let t = Date.parse(`${range.from}T00:00:00Z`); t <= end; t += 86_400_000) days.push(t / 1000);
  const series = (key: 'views' | 'adds' | 'feed_fetches' | 'rsvps') => days.map((d) => byDay.get(new Date(d * 1000).toISOString().slice(0, 10))?.[key] ?? 0);
  const plot = new uPlot(
    {
      width: widthOf(),
      height: HEIGHT,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
      scales: { x: { time: true } },
      axes: [{}, { label: 'Count', size: 50 }],
      series: [
        { label: 'Day (UTC)' },
        { label: 'Views', stroke: '#0969da', width: 2 },
        { label: 'Adds', stroke: '#1a7f37', width: 2 },
        { label: 'Feed fetches', stroke: '#9a6700', width: 2, dash: [6, 4] },
        { label: 'RSVPs', stroke: '#8250df', width: 2, dash: [2, 3] },
      ],
    },
    [days, series('views'), series('adds'), series('feed_fetches'), series('rsvps')],
    target,
  );
  const resized = new ResizeObserver(() => {
    if (widthOf() !== plot.width) plot.setSize({ width: widthOf(), height: HEIGHT });
  });
  resized.observe(target);
  return () => {
    resized.disconnect();
    plot.destroy();
  };
}

const HEIGHT = 240;
