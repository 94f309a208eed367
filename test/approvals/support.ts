/**
 * Helpers of the approval tests: objects for the compat platform (controller + real engine + API +
 * broker in this process, fake model over HTTPS, fake HTTP tool), waits on a Query's status, and
 * decisions through the real API.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, Kinds, type Query } from '../../pkg/api/index.ts';
import type { Platform } from '../compat/platform.ts';

export const obj = (kind: string, name: string, ns: string, spec: Record<string, unknown>) =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: ns }, spec }) as KubernetesObject;

/** The tool that needs approval: the fake tool's /danger, with an input schema edits must satisfy. */
export function dangerTool(
  p: Platform,
  name = 'danger',
  approval: Record<string, unknown> = { required: true },
) {
  return obj('Tool', name, p.ns, {
    description: 'Drops a table',
    http: { url: `${p.tools.url}/${name}`, method: 'POST' },
    inputSchema: {
      type: 'object',
      properties: { target: { type: 'string', minLength: 2 } },
      required: ['target'],
      additionalProperties: false,
    },
    approval,
  });
}

/** A Model on the fake server named `name` (its scripts are keyed by that name) and an Agent using it. */
export async function agentWithModel(
  p: Platform,
  name: string,
  spec: Record<string, unknown> = {},
): Promise<void> {
  await p.apply(obj('Model', name, p.ns, { type: 'openai', model: name, baseUrl: p.fake.url }));
  await p.apply(obj('Agent', name, p.ns, { prompt: `You are ${name}.`, modelRef: { name }, ...spec }));
  // The API serves from the shared cache: a chat sent before its watch event arrives is a 404
  // model_not_found (a loaded machine saw it in `make test`).
  await p.cache.waitFor(Kinds.Model, p.ns, name, (o) => !!o, { timeoutMs: 20_000 });
  await p.cache.waitFor(Kinds.Agent, p.ns, name, (o) => !!o, { timeoutMs: 20_000 });
}

export async function createQuery(p: Platform, name: string, spec: Record<string, unknown>): Promise<void> {
  await p.apply(obj('Query', name, p.ns, { ttl: '1h', ...spec }));
}

export function waitQuery(
  p: Platform,
  name: string,
  pred: (q: Query) => boolean,
  timeoutMs = 20_000,
): Promise<Query> {
  return p.cache.waitFor(Kinds.Query, p.ns, name, (o) => !!o && pred(o as Query), {
    timeoutMs,
  }) as Promise<Query>;
}

export const phaseIs = (phase: string) => (q: Query) => q.status?.phase === phase;
export const ended = (q: Query) => ['done', 'error', 'canceled'].includes(q.status?.phase ?? '');

/** Waits until the query waits for input and answers its pending approvals. */
export async function waiting(p: Platform, name: string) {
  const q = await waitQuery(p, name, phaseIs('input-required'));
  return { query: q, pending: q.status?.pendingApprovals ?? [] };
}

export interface Answered {
  status: number;
  body: { error?: { code: string; message: string; details?: unknown }; status?: Query['status'] } & Record<
    string,
    unknown
  >;
}

/** POST …/approvals through the real API; `raw` sends the string as it is. */
export async function decide(
  base: string,
  ns: string,
  query: string,
  body: unknown,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<Answered> {
  const res = await fetch(`${base}/v1/namespaces/${ns}/queries/${query}/approvals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw ?? JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answered['body'] };
}

/** The tool messages of the fake model's requests for `model` (what the model was told). */
export function toolMessages(p: Platform, model: string): string[] {
  return p.fake.requests
    .filter((r) => r.model === model)
    .flatMap((r) => r.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? ''));
}

export function lastToolMessage(p: Platform, model: string): string {
  return toolMessages(p, model).at(-1) ?? '';
}
