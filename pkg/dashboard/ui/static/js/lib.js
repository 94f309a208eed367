// Shared by every screen: the base path and mode (from <body data-*>), calls through the dashboard's
// /api proxy, live streams, DOM building without innerHTML, and keeping the session's tokens fresh.

const { dataset } = document.body;
export const base = dataset.base ?? '';
export const mode = dataset.mode ?? 'open';
const signsIn = mode === 'sso' || mode === 'hybrid';

export function signIn() {
  const back = `${location.pathname}${location.search}`;
  location.assign(`${base}/api/auth/signin?callbackUrl=${encodeURIComponent(back)}`);
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** A call to the API service through the proxy: `api('/v1/context')` → `<base>/api/v1/context`. */
export async function api(path, init = {}) {
  const headers = {
    accept: 'application/json',
    ...(init.body ? { 'content-type': 'application/json' } : {}),
  };
  const res = await fetch(`${base}/api${path}`, {
    ...init,
    headers: { ...headers, ...init.headers },
    credentials: 'same-origin',
  });
  if (res.status === 401 && signsIn) {
    signIn();
    throw new ApiError(401, 'unauthorized', 'session ended: signing in again');
  }
  if (res.status === 204) return undefined;
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const err = json?.error ?? {};
    throw new ApiError(
      res.status,
      err.code ?? 'http_error',
      err.message ?? `${res.status} ${res.statusText}`,
    );
  }
  return json;
}

let context;
/** The namespace the API service serves (GET /v1/context). */
export function namespace() {
  context ??= api('/v1/context').then((c) => c.instanceNamespace ?? c.namespace);
  return context;
}

/** An element with attributes and children; text is always text (never parsed as HTML). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (selector) => document.querySelector(selector);

export function setStatus(id, text, kind = '') {
  const el = document.getElementById(id);
  if (!el) return;
  el.textContent = text;
  el.className = `status ${kind}`.trim();
}

/** Replaces a table's rows. */
export function fillTable(id, rows) {
  const tbody = document.querySelector(`#${id} tbody`);
  tbody.replaceChildren(...rows);
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/**
 * A Server-Sent Events stream through the proxy, each `data:` frame parsed as JSON. EventSource
 * reconnects by itself; when it cannot (the session ended), the session check signs in again.
 */
export function live(path, onItem, statusId) {
  const source = new EventSource(`${base}/api${path}`);
  source.onopen = () => setStatus(statusId, 'Live', 'ok');
  source.onmessage = (event) => {
    try {
      onItem(JSON.parse(event.data));
    } catch {
      // a frame that is not JSON (e.g. [DONE]) carries no item
    }
  };
  source.onerror = () => {
    setStatus(statusId, 'Reconnecting…', 'warn');
    if (source.readyState === EventSource.CLOSED) void checkSession('interval');
  };
  return source;
}

let lastCheck = 0;
/**
 * Asks the server to refresh the provider's tokens: every 10 minutes (without counting as
 * activity) and when the window regains focus. A session that is gone means signing in again.
 */
async function checkSession(reason) {
  if (!signsIn) return;
  if (reason === 'focus' && Date.now() - lastCheck < 2000) return;
  lastCheck = Date.now();
  const res = await fetch(`${base}/api/auth/session?refresh=${reason}`, { credentials: 'same-origin' });
  const session = res.ok ? await res.json() : {};
  if (!session.user) signIn();
}

if (signsIn) {
  setInterval(() => void checkSession('interval'), 10 * 60 * 1000);
  window.addEventListener('focus', () => void checkSession('focus'));
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void checkSession('focus');
  });
}
