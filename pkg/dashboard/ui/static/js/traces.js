import { h, live } from './lib.js';

// Spans as they arrive, newest first; the page keeps the last 500.

const MAX_ROWS = 500;
const tbody = document.querySelector('#spans tbody');

function duration(span) {
  const start = Number(span.startTimeUnixNano ?? 0);
  const end = Number(span.endTimeUnixNano ?? 0);
  return start && end >= start ? `${((end - start) / 1e6).toFixed(1)} ms` : '';
}

live(
  '/v1/broker/traces?watch=true&from-beginning=true',
  (span) => {
    if (!span?.spanId) return;
    tbody.prepend(
      h(
        'tr',
        { dataset: { trace: span.traceId, span: span.spanId } },
        h('td', { class: 'mono' }, span.traceId),
        h('td', {}, span.name),
        h('td', {}, span.sessionId ?? ''),
        h('td', {}, duration(span)),
      ),
    );
    while (tbody.rows.length > MAX_ROWS) tbody.lastElementChild.remove();
  },
  'live-status',
);
