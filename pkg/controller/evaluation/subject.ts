/**
 * What an Evaluation needs before its evaluator can be called, read through the client's Reader (the
 * informer cache in a controller): the subject (input and output, or a finished Query's) and the
 * evaluator (its resolved address, headers and parameters). Each is ready, something to wait for,
 * missing (maybe not in the cache yet) or a definite error.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { type Evaluation, type Evaluator, Kinds, type Query } from '../../api/index.ts';
import { ignoreNotFound, type Reader } from '../../kube/client/index.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { resolveAddress } from '../address.ts';
import { engineSecretValue } from '../lookup.ts';
import { type EvaluateRequest, evaluateUrl, type QueryContext } from './call.ts';

const SecretRef = CoreKinds.Secret as KindRef<V1Secret>;

export type Prepared<T> =
  | { state: 'ready'; value: T }
  | { state: 'wait'; message: string }
  | { state: 'missing'; message: string }
  | { state: 'error'; message: string };

export type Subject = Pick<EvaluateRequest, 'type' | 'input' | 'output' | 'query'>;

export interface EvaluatorTarget {
  url: string;
  headers: Record<string, string>;
  parameters: Record<string, string>;
}

const keyOf = (e: Evaluation, name: string) => ({ namespace: e.metadata.namespace ?? 'default', name });

/** The text a query input stands for: a string as is, else its last user message. */
export function queryInputText(input: Query['spec']['input']): string {
  if (typeof input === 'string') return input;
  const messages = Array.isArray(input) ? input : [];
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]?.role === 'user') return messages[i]?.content ?? '';
  return messages.at(-1)?.content ?? '';
}

function fromQuery(q: Query): QueryContext {
  const s = q.status;
  return {
    name: q.metadata.name,
    namespace: q.metadata.namespace ?? 'default',
    ...(q.spec.target ? { target: q.spec.target } : {}),
    input: q.spec.input,
    response: s?.response?.content ?? '',
    ...(s?.conversationId ? { conversationId: s.conversationId } : {}),
    ...(s?.tokenUsage ? { tokenUsage: s.tokenUsage } : {}),
  };
}

/** The input and output to score. */
export async function prepareSubject(reader: Reader, e: Evaluation): Promise<Prepared<Subject>> {
  const { type, config } = e.spec;
  if (type !== 'query') {
    // The CRD requires both; an object written before that rule, or bypassing it, still gets a clear error.
    if (config?.input === undefined || config?.output === undefined)
      return { state: 'error', message: 'a direct evaluation needs config.input and config.output' };
    return { state: 'ready', value: { type: 'direct', input: config.input, output: config.output } };
  }
  const name = config?.queryRef?.name;
  if (!name) return { state: 'error', message: 'a query evaluation needs config.queryRef.name' };
  const q = await ignoreNotFound(reader.get(Kinds.Query, keyOf(e, name)));
  if (!q) return { state: 'missing', message: `Query ${name} not found` };
  const phase = q.status?.phase ?? 'pending';
  if (phase === 'error' || phase === 'canceled') {
    const why = q.status?.message ? `: ${q.status.message}` : '';
    return { state: 'error', message: `Query ${name} ended ${phase}${why}` };
  }
  // One message whatever the Query's phase, so pending → running of the Query costs no write here.
  if (phase !== 'done') return { state: 'wait', message: `waiting for Query ${name} to finish` };
  const query = fromQuery(q);
  return {
    state: 'ready',
    value: { type: 'query', input: queryInputText(q.spec.input), output: query.response, query },
  };
}

async function headerValues(reader: Reader, ev: Evaluator): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const h of ev.spec.headers ?? []) {
    const ref = h.valueFrom?.secretKeyRef;
    if (!ref) {
      out[h.name] = h.value ?? '';
      continue;
    }
    // resolveAddress already checked that the Secret and key exist and that the Secret opted in;
    // the check is made again on what is read now (the label may have gone in between).
    const secret = await reader.get(SecretRef, {
      namespace: ev.metadata.namespace ?? 'default',
      name: ref.name,
    });
    out[h.name] = engineSecretValue(secret, ref.key) ?? '';
  }
  return out;
}

/**
 * The evaluator to call, resolved by the same rules as its status (not read from its status, which
 * may lag behind the Evaluator's creation); an unresolvable one counts as missing, since its
 * Service or Secret may be on its way.
 */
export async function prepareEvaluator(
  reader: Reader,
  e: Evaluation,
  watchNamespace?: string,
): Promise<Prepared<EvaluatorTarget>> {
  const name = e.spec.evaluator.name;
  const ev = await ignoreNotFound(reader.get(Kinds.Evaluator, keyOf(e, name)));
  if (!ev) return { state: 'missing', message: `Evaluator ${name} not found` };
  const r = await resolveAddress({ reader, watchNamespace }, ev);
  if (r.phase !== 'ready' || !r.address)
    return { state: 'missing', message: `Evaluator ${name}: ${r.message}` };
  return {
    state: 'ready',
    value: {
      url: evaluateUrl(r.address),
      headers: await headerValues(reader, ev),
      parameters: { ...ev.spec.parameters, ...e.spec.evaluator.parameters },
    },
  };
}
