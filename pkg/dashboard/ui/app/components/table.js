// Tables: a sortable table of rows (headers are buttons: keyboard works), and a list that pages on
// the server with the API's limit/continue, filters by name (q) and sorts (name or creation).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, nsPath } from '../lib/api.js';
import { useAsync } from '../lib/hooks.js';
import { html } from '../lib/html.js';

/**
 * columns: [{label, value: (row) => node, sortKey?: (row) => string|number}]; rows are sorted on
 * the page by a clicked column (a second click reverses).
 */
export function DataTable({ id, columns, rows, rowAttrs = () => ({}), caption }) {
  const [by, setBy] = useState({ col: -1, dir: 1 });
  const sorted = useMemo(() => {
    const col = columns[by.col];
    if (!col?.sortKey) return rows;
    const k = col.sortKey;
    return [...rows].sort((a, b) => {
      const x = k(a);
      const y = k(b);
      return by.dir * (x < y ? -1 : x > y ? 1 : 0);
    });
  }, [rows, by, columns]);
  const head = (c, i) =>
    c.sortKey
      ? html`<th aria-sort=${by.col === i ? (by.dir > 0 ? 'ascending' : 'descending') : 'none'}><button type="button" class="th-sort" onClick=${() => setBy({ col: i, dir: by.col === i ? -by.dir : 1 })}>${c.label}${by.col === i ? (by.dir > 0 ? ' ▲' : ' ▼') : ''}</button></th>`
      : html`<th>${c.label}</th>`;
  return html`<div class="table-wrap"><table id=${id}>
    ${caption ? html`<caption>${caption}</caption>` : ''}
    <thead><tr>${columns.map(head)}</tr></thead>
    <tbody>${sorted.map((r) => html`<tr ...${rowAttrs(r)}>${columns.map((c) => html`<td>${c.value(r)}</td>`)}</tr>`)}</tbody>
  </table></div>`;
}

export const PAGE_SIZE = 50;

/**
 * A list of `plural` in the served namespace, a page at a time. The continue tokens of the pages
 * seen are kept, so "Previous" goes back without the server keeping anything.
 */
export function usePagedList(plural, { sort: initialSort = 'name', limit = PAGE_SIZE } = {}) {
  const [q, setQ] = useState('');
  const [sort, setSort] = useState(initialSort);
  const [tokens, setTokens] = useState(['']);
  const token = tokens.at(-1);
  const list = useAsync(async () => {
    const params = new URLSearchParams({ limit: String(limit), sort });
    if (q) params.set('q', q);
    if (token) params.set('continue', token);
    return api(`${await nsPath(plural)}?${params}`);
  }, [plural, q, sort, token, limit]);
  useEffect(() => setTokens(['']), [q, sort]);
  return {
    ...list,
    items: list.data?.items ?? [],
    total: list.data?.total,
    q,
    setQ,
    sort,
    setSort,
    page: tokens.length,
    hasNext: !!list.data?.continue,
    next: () => setTokens((t) => [...t, list.data.continue]),
    hasPrev: tokens.length > 1,
    prev: () => setTokens((t) => t.slice(0, -1)),
  };
}

/** The filter box, sort choice and pager of a paged list. */
export function ListControls({ list, label = 'name' }) {
  const [text, setText] = useState(list.q);
  useEffect(() => {
    const t = setTimeout(() => list.setQ(text.trim()), 250);
    return () => clearTimeout(t);
  }, [text]);
  return html`<div class="controls">
    <label class="filter">Filter <input type="search" name="q" placeholder=${`${label} contains…`} value=${text} onInput=${(e) => setText(e.currentTarget.value)} /></label>
    <label>Sort <select name="sort" value=${list.sort} onChange=${(e) => list.setSort(e.currentTarget.value)}>
      <option value="-created">newest first</option>
      <option value="created">oldest first</option>
      <option value="name">name A–Z</option>
      <option value="-name">name Z–A</option>
    </select></label>
    <span class="pager">
      <button type="button" class="prev" disabled=${!list.hasPrev} onClick=${list.prev}>← Previous</button>
      <span class="muted">page ${list.page}${list.total !== undefined ? ` · ${list.total} in all` : ''}</span>
      <button type="button" class="next" disabled=${!list.hasNext} onClick=${list.next}>Next →</button>
    </span>
  </div>`;
}
