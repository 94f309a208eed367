import { randomBytes } from 'node:crypto';
import { ANNOTATION_STREAMING, API_VERSION, GROUP, QUERY_FINALIZER, type Query } from '../../api/index.ts';
import { compileSchema } from '../../engine/json-schema.ts';
import { parseJson } from '../../http/index.ts';
import { CompatError } from './errors.ts';
import { isTargetPrefix, type TargetPrefix } from './models.ts';
import { type ChatRequest, textOf } from './schemas.ts';

/** A chat request the platform cannot run, naming the parameter at fault (OpenAI `param`). */
export class ChatRequestError extends CompatError {
  override name = 'ChatRequestError';
  declare readonly param: string;

  constructor(message: string, param: string, code: 'invalid_value' | 'invalid_model' = 'invalid_value') {
    super(code, message, { param });
  }
}

const RESERVED_METADATA = new Set([
  'queryAnnotations',
  'svc',
  'sessionId',
  'session_id',
  'conversationId',
  'conversation_id',
]);

export function parseTarget(model: string): { type: TargetPrefix; name: string } {
  const slash = model.indexOf('/');
  const type = model.slice(0, slash);
  const name = model.slice(slash + 1);
  if (slash < 0 || !isTargetPrefix(type)) {
    throw new ChatRequestError(
      `model must be "agent/<name>", "team/<name>", "model/<name>" or "tool/<name>", got ${JSON.stringify(model)}`,
      'model',
      'invalid_model',
    );
  }
  if (!name)
    throw new ChatRequestError(`model ${JSON.stringify(model)} names no target`, 'model', 'invalid_model');
  return { type, name };
}

function jsonObjectOfStrings(raw: string, param: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = parseJson(raw); // depth-limited: the values are re-serialized below
  } catch (err) {
    throw new ChatRequestError(`${param} must be a JSON object string: ${(err as Error).message}`, param);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ChatRequestError(`${param} must be a JSON object`, param);
  return Object.fromEntries(
    Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}

/** Annotations for the Query from `metadata.queryAnnotations`, `metadata.svc` and the stream flag. */
export function annotationsOf(req: ChatRequest): Record<string, string> {
  const md = req.metadata ?? {};
  const out: Record<string, string> = {};
  if (md.queryAnnotations)
    Object.assign(out, jsonObjectOfStrings(md.queryAnnotations, 'metadata.queryAnnotations'));
  if (md.svc) {
    const svc = jsonObjectOfStrings(md.svc, 'metadata.svc');
    if (svc.annotations) Object.assign(out, jsonObjectOfStrings(svc.annotations, 'metadata.svc.annotations'));
  }
  const rest = Object.fromEntries(Object.entries(md).filter(([k]) => !RESERVED_METADATA.has(k)));
  if (Object.keys(rest).length) out[`${GROUP}/chat-metadata`] = JSON.stringify(rest);
  out[ANNOTATION_STREAMING] = req.stream ? 'true' : 'false';
  return out;
}

export function queryName(): string {
  return `chat-query-${randomBytes(5).toString('hex')}`;
}

/**
 * The request's response_format as the Query's spec.responseFormat (none for `text`); a schema the
 * engine could not check (not a JSON Schema, a remote $ref, a nested-quantifier pattern) is a 400 now.
 */
function responseFormatOf(req: ChatRequest): Record<string, unknown> | undefined {
  const rf = req.response_format;
  if (!rf || rf.type === 'text') return undefined;
  const schema = rf.json_schema?.schema;
  if (rf.type === 'json_schema' && schema) {
    try {
      compileSchema(schema);
    } catch (err) {
      throw new ChatRequestError((err as Error).message, 'response_format.json_schema.schema');
    }
  }
  return rf as Record<string, unknown>;
}

/** The Query a chat completion runs as: the whole message history, its target, session and conversation. */
export function buildQuery(req: ChatRequest, namespace: string): Query {
  const target = parseTarget(req.model);
  const md = req.metadata ?? {};
  const input = req.messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role,
    content: textOf(m.content),
  })) as Query['spec']['input'];
  const sessionId = md.sessionId ?? md.session_id;
  const conversationId = md.conversationId ?? md.conversation_id;
  const responseFormat = responseFormatOf(req);
  return {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: {
      name: queryName(),
      namespace,
      annotations: annotationsOf(req),
      // The controller would add its cleanup finalizer with a write of its own; created with it,
      // a completion costs one API write (and one watch event per informer) less.
      finalizers: [QUERY_FINALIZER],
    },
    spec: {
      input,
      target,
      ttl: '720h',
      timeout: '5m',
      cancel: false,
      ...(sessionId ? { sessionId } : {}),
      ...(conversationId ? { conversationId } : {}),
      ...(responseFormat ? { responseFormat } : {}),
    },
  };
}
