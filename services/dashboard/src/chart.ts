import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { AnalyticsRow } from './api/types';

/**
 * The analytics chart (uPlot, loaded only on the screens that draw one): views, adds, feed
 * fetches and RSVPs per UTC day. Returns what removes it.
 */
export function drawDaily(target: HTMLElement, rows: AnalyticsRow[], width: number): () => void {
  const days = rows.map((r) => Date.parse(`${r.date}T00:00:00Z`) / 1000);
  const series = (key: 'views' | 'adds' | 'feed_fetches' | 'rsvps') => rows.map((r) => r[key]);
  const plot = new uPlot(
    {
      width,
      height: 240,
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
  return () => plot.destroy();
}
