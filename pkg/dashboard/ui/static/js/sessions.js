import { fillTable, h, live, when } from './lib.js';

// Sessions as the broker rolls them up, live: each frame is a session's new state.

const rows = new Map();

function render() {
  const sorted = [...rows.values()].sort((a, b) =>
    String(b.lastActivity).localeCompare(String(a.lastActivity)),
  );
  fillTable(
    'sessions',
    sorted.map((s) =>
      h(
        'tr',
        { dataset: { session: s.sessionId } },
        h('td', {}, s.sessionId),
        h('td', { class: `phase ${s.status}` }, s.status),
        h('td', {}, s.counts?.queries ?? 0),
        h('td', {}, s.counts?.messages ?? 0),
        h('td', {}, when(s.lastActivity)),
      ),
    ),
  );
}

live(
  '/v1/broker/sessions?watch=true&from-beginning=true',
  (session) => {
    if (!session?.sessionId) return;
    rows.set(session.sessionId, session);
    render();
  },
  'live-status',
);
