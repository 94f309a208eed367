// Calls to the API service through the dashboard's /api proxy, live streams over SSE, and keeping
// the session's tokens fresh (sso/hybrid). The base path and mode come from <body data-*>.

const { dataset } = document.body;
export const base = dataset.base ?? '';
export const mode = dataset.mode ?? 'open';
export const signsIn = mode === 'sso' || mode === 'hybrid';

/** The URL of a bundle loaded on demand (`yaml`, `chart`): content-hashed names the shell lists. */
export const assetUrl = (name) => dataset[`asset${name[0].toUpperCase()}${name.slice(1)}`];

export function signIn() {
  const back = `${location.pathname}${location.search}`;
  location.assign(`${base}/api/auth/signin?callbackUrl=${encodeURIComponent(back)}`);
}

/** An API answer that is not a success: status, the envelope's code, message and details. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** `api('/v1/context')` → `<base>/api/v1/context`, JSON in and out; throws ApiError. */
export async function api(path, init = {}) {
  const body =
    init.body !== undefined && typeof init.body !== 'string' ? JSON.stringify(init.body) : init.body;
  const headers = { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(`${base}/api${path}`, {
    ...init,
    body,
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
    // The /v1 envelope, or a Kubernetes Status passed through (generic routes).
    const err = json?.error ?? (json?.kind === 'Status' ? { code: json.reason, message: json.message } : {});
    throw new ApiError(
      res.status,
      err.code ?? 'http_error',
      err.message ?? `${res.status} ${res.statusText}`,
      err.details,
    );
  }
  return json;
}

/** The API's YAML of an object (generic route): `Accept: application/yaml`. */
export async function apiText(path, accept = 'application/yaml') {
  const res = await fetch(`${base}/api${path}`, { headers: { accept }, credentials: 'same-origin' });
  if (res.status === 401 && signsIn) signIn();
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, 'http_error', text.slice(0, 300));
  return text;
}

let context;
const NS_KEY = `berth.namespace:${base}`;
/**
 * The namespace the API service serves (GET /v1/context), kept for the tab's session: it does not
 * change under a dashboard, and every page needs it before its first request.
 */
export function namespace() {
  const known = sessionStorage.getItem(NS_KEY);
  if (known) context ??= Promise.resolve(known);
  context ??= api('/v1/context').then(
    (c) => {
      const ns = c.instanceNamespace ?? c.namespace;
      sessionStorage.setItem(NS_KEY, ns);
      return ns;
    },
    (err) => {
      context = undefined;
      throw err;
    },
  );
  return context;
}

/** `/v1/namespaces/<ns>/<rest>` of the served namespace. */
export async function nsPath(rest) {
  return `/v1/namespaces/${encodeURIComponent(await namespace())}/${rest}`;
}

let probe;
/**
 * What the API would allow here: `{resources: {<plural>: {create, update, delete}}, approve}`.
 * Fail-closed: any error (an API without the probe too) allows nothing.
 */
export function permissions() {
  probe ??= nsPath('permissions')
    .then((p) => api(p))
    .catch(() => ({ resources: {}, approve: false }));
  return probe;
}
export const can = (perms, plural, verb) => perms?.resources?.[plural]?.[verb] === true;

/**
 * A Server-Sent Events stream through the proxy, each `data:` frame parsed as JSON. EventSource
 * reconnects by itself (resuming with Last-Event-ID); when it cannot, the session is checked.
 * Returns a function that closes it.
 */
export function live(path, onItem, onStatus = () => {}) {
  const source = new EventSource(`${base}/api${path}`);
  source.onopen = () => onStatus('live');
  source.onmessage = (event) => {
    let item;
    try {
      item = JSON.parse(event.data);
    } catch {
      return; // a frame that is not JSON (e.g. [DONE]) carries no item
    }
    onItem(item);
  };
  source.onerror = () => {
    onStatus('reconnecting');
    if (source.readyState === EventSource.CLOSED) void checkSession('interval');
  };
  return () => source.close();
}

let lastCheck = 0;
/** Asks the server to refresh the provider's tokens; a session that is gone signs in again. */
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
