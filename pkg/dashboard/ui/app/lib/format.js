// Times, durations and numbers as people read them.

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/** "3 s ago", "5 min ago", else the date. */
export function ago(iso) {
  if (!iso) return '';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (Number.isNaN(s)) return '';
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

/** Milliseconds as "850 ms", "1.2 s", "2 min 5 s". */
export function ms(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '';
  if (n < 1) return `${n.toFixed(2)} ms`;
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(n / 60_000)} min ${Math.round((n % 60_000) / 1000)} s`;
}

export const num = (n) => (n === undefined || n === null ? '' : Number(n).toLocaleString());

/** A Query's input as text: the string, or the last user message of a list. */
export function inputText(input) {
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) return input.findLast((m) => m.role === 'user')?.content ?? '';
  return '';
}

/** `agent/assistant` from a target. */
export const targetText = (t) => (t ? `${t.type}/${t.name}` : '');

/** Where a Memory/Evaluator/MCP server points: its resolved address, its URL or its Service. */
export function addressText(o) {
  if (o.status?.lastResolvedAddress) return o.status.lastResolvedAddress;
  if (o.spec?.address?.value) return o.spec.address.value;
  const ref = o.spec?.address?.valueFrom?.serviceRef;
  return ref ? `service ${ref.name}:${ref.port ?? ''}` : '';
}
