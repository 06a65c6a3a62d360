import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from '../dom';
import { count } from '../format';
import type { Usage } from '../types';
import { observeWidth } from './size';

const HOUR = 3600;

/** 48 hourly slots ending with the current hour, zero where the API reported no traffic. */
export function hourlySlots(
  history: Usage['history'],
  hours: number,
  now = Date.now(),
): { t: number[]; requests: number[]; rejected: number[] } {
  const current = Math.floor(now / 1000 / HOUR) * HOUR;
  const byHour = new Map(history.map((r) => [Math.floor(new Date(r.hour).getTime() / 1000), r]));
  const t: number[] = [];
  const requests: number[] = [];
  const rejected: number[] = [];
  for (let i = hours - 1; i >= 0; i--) {
    const slot = current - i * HOUR;
    const r = byHour.get(slot);
    t.push(slot);
    requests.push(r?.requests ?? 0);
    rejected.push(r?.rejected ?? 0);
  }
  return { t, requests, rejected };
}

/**
 * The key's requests per hour as bars (served and refused with 429), with the same numbers in a
 * table for screen readers and keyboard users.
 */
export function usageChart(usage: Usage, hours = 48): { el: HTMLElement; destroy: () => void } {
  const slots = hourlySlots(usage.history, hours);
  const plot = h('div', {
    class: 'chart usage-chart',
    'data-chart': 'usage',
    role: 'img',
    'aria-label': `Requests per hour over the last ${hours} hours`,
  });
  const bars = uPlot.paths.bars!({ size: [0.7, 40] });
  // Half an hour either side, so the first and the current hour's bars are whole.
  const xRange: [number, number] = [slots.t[0]! - HOUR / 2, slots.t[slots.t.length - 1]! + HOUR / 2];
  const u = new uPlot(
    {
      width: 600,
      height: 220,
      scales: { x: { time: true, range: () => xRange }, y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
      series: [
        {},
        {
          label: 'Served',
          stroke: '#1d4ed8',
          width: 0,
          fill: 'rgba(29, 78, 216, 0.7)',
          paths: bars,
          points: { show: false },
        },
        {
          label: 'Refused (429)',
          stroke: '#b91c1c',
          width: 0,
          fill: 'rgba(185, 28, 28, 0.85)',
          paths: bars,
          points: { show: false },
        },
      ],
      axes: [{}, { size: 50, values: (_u, vals) => vals.map((v) => count(v)) }],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    },
    [slots.t, slots.requests, slots.rejected],
    plot,
  );
  Object.defineProperty(plot, 'uplot', { value: u });
  const stop = observeWidth(plot, (w) => u.setSize({ width: w, height: 220 }));

  const fmt = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  const rows = slots.t
    .map((t, i) => ({ t, served: slots.requests[i]!, refused: slots.rejected[i]! }))
    .filter((r) => r.served > 0 || r.refused > 0);
  const tableEl = h(
    'details',
    { class: 'data-table' },
    h('summary', null, 'Show as a table'),
    rows.length === 0
      ? h('p', { class: 'muted' }, 'No requests in these hours.')
      : h(
          'table',
          null,
          h('caption', null, 'Requests per hour (hours with traffic)'),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, 'Hour'),
              h('th', { scope: 'col' }, 'Served'),
              h('th', { scope: 'col' }, 'Refused'),
            ),
          ),
          h(
            'tbody',
            null,
            rows
              .reverse()
              .map((r) =>
                h(
                  'tr',
                  null,
                  h('td', null, fmt.format(new Date(r.t * 1000))),
                  h('td', null, count(r.served)),
                  h('td', null, count(r.refused)),
                ),
              ),
          ),
        ),
  );
  return {
    el: h('div', null, plot, tableEl),
    destroy: () => {
      stop();
      u.destroy();
    },
  };
}
