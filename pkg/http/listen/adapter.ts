import type { RequestListener } from 'node:http';
import type { getRequestListener } from '@hono/node-server';

export type Fetch = Parameters<typeof getRequestListener>[0];

let loading: Promise<typeof getRequestListener> | undefined;

/**
 * @hono/node-server, imported on first use. Loading it touches the global `Request`/`Response`,
 * which makes Node load its whole fetch implementation (undici): an idle server that has only
 * answered probes never pays for it (docs/broker.md "Footprint").
 */
function loadNodeAdapter(): Promise<typeof getRequestListener> {
  loading ??= import('@hono/node-server').then(
    (m) => m.getRequestListener,
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}

/** A listener that loads the adapter with the first request it is given. */
export function lazyRequestListener(fetch: Fetch, hostname: string): RequestListener {
  let listener: RequestListener | undefined;
  return (req, res) => {
    if (listener) {
      listener(req, res);
      return;
    }
    // Requests arriving during the load wait for it; their bodies stay unread in the socket.
    loadNodeAdapter().then(
      (get) => {
        listener ??= get(fetch, { hostname }) as RequestListener;
        listener(req, res);
      },
      (err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  };
}

/** The header of @hono/node-server's `RESPONSE_ALREADY_SENT` (adapter.test.ts checks they agree). */
export const ALREADY_SENT_HEADER = 'x-hono-already-sent';

let marker: Response | undefined;

/**
 * What a route returns once it has written its answer on the socket itself (an SSE stream): the
 * adapter then leaves the response alone. Not the adapter's own constant, which is built when its
 * module loads (that would load undici at start-up again), and is built from whatever the global
 * Response is then.
 */
export function alreadySent(): Response {
  marker ??= new (realResponseClass())(null, { headers: { [ALREADY_SENT_HEADER]: 'true' } });
  return marker;
}

/**
 * The real Response class. The adapter replaces the global one with a lightweight class (whose
 * prototype is the real one), and writes a lightweight response itself, headers and all: a
 * lightweight marker would be written a second time (ERR_HTTP_HEADERS_SENT).
 */
export function realResponseClass(): typeof Response {
  let c = globalThis.Response;
  while (Object.getPrototypeOf(c) !== Function.prototype) c = Object.getPrototypeOf(c);
  return c;
}
