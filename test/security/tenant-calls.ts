/**
 * What the isolation tests send: the Berth objects a tenant creates, and every call a tenant can make
 * to a broker — each read, each write (chunks injected into a query's stream, messages into a
 * conversation, events, sessions, spans) and each purge.
 */
import type { Cluster, Obj } from './tenants.ts';

export const auth = (token?: string): Record<string, string> =>
  token ? { authorization: `Bearer ${token}` } : {};

/** GET that must answer 200; the body as text. */
export async function read(url: string, token?: string): Promise<string> {
  const res = await fetch(url, { headers: auth(token) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text}`);
  return text;
}

export type Call = readonly [method: string, path: string, body?: unknown];

/** One call's status (the body is dropped). */
export async function statusOf(base: string, token: string | undefined, [method, path, body]: Call) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth(token), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  await res.body?.cancel();
  return res.status;
}

/** Every broker endpoint that is not open (health, metrics, docs), aimed at `query` and `conversation`. */
export function brokerCalls(query: string, conversation: string, injected: string): Call[] {
  const chunk = { choices: [{ index: 0, delta: { content: injected } }] };
  const message = { role: 'user', content: injected };
  return [
    ['GET', '/messages'],
    ['GET', `/messages?conversation_id=${conversation}`],
    ['GET', '/memory-status'],
    ['GET', '/conversations'],
    ['GET', `/conversations/${conversation}`],
    ['GET', '/events'],
    ['GET', `/events/${query}`],
    ['GET', '/stream'],
    ['GET', `/stream/${query}?from-beginning=true`],
    ['GET', '/traces'],
    ['GET', '/sessions'],
    ['POST', `/stream/${query}`, chunk],
    ['POST', `/stream/${query}/complete`],
    ['POST', '/messages', { conversation_id: conversation, query_id: query, messages: [message] }],
    ['POST', '/conversations', {}],
    ['POST', '/events', { reason: 'Injected', message: injected, data: { queryId: query } }],
    ['POST', '/sessions', { sessionId: injected }],
    ['POST', '/v1/traces', {}],
    ['DELETE', '/messages'],
    ['DELETE', `/queries/${query}/messages`],
    ['DELETE', `/conversations/${conversation}/queries/${query}/messages`],
    ['DELETE', `/conversations/${conversation}`],
    ['DELETE', '/conversations'],
    ['DELETE', `/events/${query}`],
    ['DELETE', '/events'],
    ['DELETE', '/stream'],
    ['DELETE', '/traces'],
    ['DELETE', '/sessions'],
  ];
}

export const berthObject = (kind: string, ns: string, name: string, spec: object, extra: object = {}): Obj =>
  ({ apiVersion: 'berth.dev/v1alpha1', kind, metadata: { name, namespace: ns, ...extra }, spec }) as Obj;

/** A streaming Query asking the namespace's Model `default`. */
export const queryObject = (ns: string, name: string, input: string, spec: object = {}) =>
  berthObject(
    'Query',
    ns,
    name,
    { input, target: { type: 'model', name: 'default' }, ...spec },
    { annotations: { 'berth.dev/streaming-enabled': 'true' } },
  );

/** Waits for a Query's phase; when it never comes, the error shows its status and the controller's warnings. */
export function waitPhase(
  cluster: Cluster,
  controllerLog: () => string,
  ns: string,
  name: string,
  p: string,
) {
  return cluster.wait(ns, `query/${name}`, `jsonpath={.status.phase}=${p}`).catch(async (err: Error) => {
    const got = await cluster
      .kubectl(['get', 'query', name, '-n', ns, '-o', 'jsonpath={.status}'])
      .catch(String);
    const warned = controllerLog()
      .split('\n')
      .filter((l) => /"level":"(warn|error)"/.test(l))
      .slice(-8)
      .map((l) => l.slice(0, 600));
    throw new Error(`${err.message}\nstatus: ${got}\ncontroller warnings:\n${warned.join('\n') || '(none)'}`);
  });
}

export async function queryStatus(cluster: Cluster, ns: string, name: string) {
  return (await cluster.getJson<{ status: Record<string, string> }>(ns, `query/${name}`)).status;
}

/**
 * Every credential tenant `from` can obtain for `to`'s broker, and the answer it must get: none or a
 * forged one (401), and TokenRequest tokens of `from`'s accounts in each audience — `berth-broker`
 * and `berth-broker:<to>` are valid there but not `to`'s identities (403), the others invalid (401).
 */
export async function tokensOf(cluster: Cluster, from: string, to: string) {
  const out: Array<[who: string, token: string | undefined, status: number]> = [
    ['no token', undefined, 401],
    ['a forged token', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 401],
  ];
  for (const sa of ['berth-api', 'berth-broker'])
    for (const aud of [undefined, 'berth-broker', `berth-broker:${to}`, `berth-broker:${from}`]) {
      const valid = aud === 'berth-broker' || aud === `berth-broker:${to}`;
      out.push([
        `${from}/${sa} (${aud ?? 'API server audience'})`,
        await cluster.token(sa, from, aud),
        valid ? 403 : 401,
      ]);
    }
  return out;
}
