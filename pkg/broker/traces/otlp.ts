import type { SpanGroups } from './raw-spans.ts';

export const SESSION_ATTRIBUTE = 'svc.session.id';

interface KeyValue {
  key?: unknown;
  value?: { stringValue?: unknown } & Record<string, unknown>;
}

/** A span as stored and served: the OTLP/JSON span fields plus its resource and scope. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  sessionId?: string;
  [RAW_MEMBERS]?: string;
  [k: string]: unknown;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/** Whether `v` is already an id as stored: lowercase hex of the length, not all zeros. */
export function isCanonicalId(v: string, chars: number): boolean {
  if (v.length !== chars) return false;
  let nonZero = false;
  for (let i = 0; i < chars; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x30) continue;
    if (!((c > 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
    nonZero = true;
  }
  return nonZero;
}

/**
 * An id as lowercase hex. OTLP/JSON uses hex; some clients send base64 (the protobuf JSON mapping),
 * which is accepted when it decodes to the right length.
 */
export function normalizeId(v: unknown, bytes: 8 | 16): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (isCanonicalId(v, bytes * 2)) return v;
  const lower = v.toLowerCase();
  if ((bytes === 16 ? HEX32 : HEX16).test(lower)) return /^0+$/.test(lower) ? undefined : lower;
  if (/^[A-Za-z0-9+/_-]+=*$/.test(v)) {
    const b = Buffer.from(v, 'base64');
    if (b.length === bytes && b.some((x) => x !== 0)) return b.toString('hex');
  }
  return undefined;
}

function sessionIn(attrs: unknown): string | undefined {
  if (!Array.isArray(attrs)) return undefined;
  for (const a of attrs as KeyValue[]) {
    if (a?.key === SESSION_ATTRIBUTE && typeof a.value?.stringValue === 'string') return a.value.stringValue;
  }
  return undefined;
}

/**
 * The members of a span's stored JSON as the client wrote them (its text without the braces), on
 * a span stored as sent; absent when the span must be re-serialized.
 */
export const RAW_MEMBERS = Symbol('raw span members');

export interface Flattened {
  spans: SpanRecord[];
  rejected: number;
  errors: string[];
}

type Ids = { traceId: string; spanId: string; parentSpanId: string | undefined };

/**
 * Walks `resourceSpans[].scopeSpans[].spans[]`, validating each span; bad spans are counted, not
 * fatal. `raw` (from `rawSpanGroups` over the text the request was parsed from) lets a span whose
 * fields are already as stored keep the client's text instead of being serialized again.
 */
export function flattenRequest(req: unknown, raw?: SpanGroups): Flattened {
  if (!req || typeof req !== 'object' || Array.isArray(req))
    throw new TypeError('the body must be an ExportTraceServiceRequest object');
  const rs = (req as { resourceSpans?: unknown }).resourceSpans ?? [];
  if (!Array.isArray(rs)) throw new TypeError('resourceSpans must be an array');
  const texts = raw && sameShape(raw, rs) ? raw : undefined;
  const out: Flattened = { spans: [], rejected: 0, errors: [] };
  for (const [ri, r] of (rs as Array<Record<string, unknown>>).entries()) {
    const scopes = r?.scopeSpans ?? [];
    if (!Array.isArray(scopes)) throw new TypeError('scopeSpans must be an array');
    for (const [si, s] of (scopes as Array<Record<string, unknown>>).entries()) {
      const group = spanGroup(r?.resource, s?.scope);
      const spans = s?.spans ?? [];
      if (!Array.isArray(spans)) throw new TypeError('spans must be an array');
      for (const [i, span] of (spans as Array<Record<string, unknown>>).entries())
        addSpan(out, i, flattenSpan(span, texts?.[ri]?.[si]?.[i], group));
    }
  }
  return out;
}

/** What the spans of one scope share: their resource and scope as stored, the resource's session. */
export interface SpanGroup {
  resource: { attributes: unknown };
  scope: unknown;
  session: string | undefined;
}

/**
 * The group of the spans under `resource` and `scope` (as parsed). One object per resource and
 * per scope, shared by their spans: the store serializes each once.
 */
export function spanGroup(resource: unknown, scope: unknown): SpanGroup {
  const r = (resource ?? {}) as Record<string, unknown>;
  return {
    resource: { attributes: r.attributes ?? [] },
    scope: scope ?? {},
    session: sessionIn(r.attributes),
  };
}

/**
 * One parsed span through validation: its record, or what is wrong with it. `text`, the span's
 * JSON as the client wrote it, lets a span whose fields are already as stored keep it.
 */
export function flattenSpan(
  span: Record<string, unknown>,
  text: string | undefined,
  group: SpanGroup,
): SpanRecord | string {
  const ids = validate(span);
  if (typeof ids === 'string') return ids;
  const sessionId = sessionIn(span.attributes) ?? group.session;
  return text !== undefined && storedAsSent(span, ids)
    ? asSent(span, ids, text, group.resource, group.scope, sessionId)
    : reserialized(span, ids, group.resource, group.scope, sessionId);
}

/** Adds span `i` of a scope (its record or what is wrong with it) to `out`. */
export function addSpan(out: Flattened, i: number, span: SpanRecord | string): void {
  if (typeof span !== 'string') out.spans.push(span);
  else {
    out.rejected++;
    if (out.errors.length < 5) out.errors.push(`span ${i}: ${span}`);
  }
}

function reserialized(
  span: Record<string, unknown>,
  ids: Ids,
  resource: unknown,
  scope: unknown,
  sessionId?: string,
) {
  // The sequence is the store's: a span's own `sequence` member would shadow it for readers.
  const { traceId: _t, spanId: _s, parentSpanId: _p, sequence: _q, ...rest } = span;
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    ...(ids.parentSpanId ? { parentSpanId: ids.parentSpanId } : {}),
    ...rest,
    name: span.name as string,
    resource,
    scope,
    ...(sessionId ? { sessionId } : {}),
  };
}

function asSent(
  span: Record<string, unknown>,
  ids: Ids,
  text: string,
  resource: unknown,
  scope: unknown,
  sessionId?: string,
): SpanRecord {
  const members = text.slice(text.indexOf('{') + 1, text.lastIndexOf('}'));
  const session = sessionMember(sessionId);
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    name: span.name as string,
    resource,
    scope,
    ...(sessionId ? { sessionId } : {}),
    [RAW_MEMBERS]: members + session,
  };
}

/**
 * Whether the client's text of this span is what would be stored: ids already canonical (the
 * parsed values are the ones a reader of the text gets, duplicates included: the last wins both
 * ways) and none of the members the store sets itself.
 */
function storedAsSent(span: Record<string, unknown>, ids: Ids): boolean {
  return (
    span.traceId === ids.traceId &&
    span.spanId === ids.spanId &&
    (span.parentSpanId === undefined || span.parentSpanId === ids.parentSpanId) &&
    !Object.hasOwn(span, 'sequence') &&
    !Object.hasOwn(span, 'resource') &&
    !Object.hasOwn(span, 'scope') &&
    !Object.hasOwn(span, 'sessionId')
  );
}

/** Whether the scanned texts line up one to one with the parsed export. */
function sameShape(raw: SpanGroups, rs: unknown[]): boolean {
  if (raw.length !== rs.length) return false;
  return rs.every((r, i) => {
    const scopes = (r as { scopeSpans?: unknown } | null)?.scopeSpans ?? [];
    const groups = raw[i] as string[][];
    if (!Array.isArray(scopes) || groups.length !== scopes.length) return false;
    return scopes.every((s, j) => {
      const spans = (s as { spans?: unknown } | null)?.spans ?? [];
      return Array.isArray(spans) && spans.length === groups[j]?.length;
    });
  });
}

/** The span's ids (normalized), or what is wrong with it. */
function validate(raw: Record<string, unknown>): Ids | string {
  if (!raw || typeof raw !== 'object') return 'not an object';
  const traceId = normalizeId(raw.traceId, 16);
  if (!traceId) return 'traceId must be 16 non-zero bytes (32 hex characters)';
  const spanId = normalizeId(raw.spanId, 8);
  if (!spanId) return 'spanId must be 8 non-zero bytes (16 hex characters)';
  const parentSpanId = normalizeId(raw.parentSpanId, 8);
  if (raw.parentSpanId !== undefined && raw.parentSpanId !== '' && !parentSpanId)
    return 'parentSpanId must be 8 bytes (16 hex characters)';
  if (typeof raw.name !== 'string') return 'name must be a string';
  if (raw.attributes !== undefined && !Array.isArray(raw.attributes)) return 'attributes must be an array';
  return { traceId, spanId, parentSpanId };
}

const serialized = new WeakMap<object, string>();

/** JSON of an object shared by many spans (their resource, their scope), built once. */
function sharedJson(o: unknown): string {
  if (!o || typeof o !== 'object') return JSON.stringify(o ?? {});
  let json = serialized.get(o);
  if (json === undefined) {
    json = JSON.stringify(o);
    serialized.set(o, json);
  }
  return json;
}

/** A span ready to store: what it is indexed by, and its stored JSON after `{"sequence":N,`. */
export interface PreparedSpan {
  traceId: string;
  sessionId?: string | undefined;
  tail: string;
}

/**
 * The stored JSON of a span is `{"sequence":N, …its own fields…, "resource":…, "scope":…}`; all but
 * the sequence (the store's to assign) is built here, where the export is decoded (possibly on the
 * decoding thread). An agent's export repeats one resource (service, SDK, pod attributes) and
 * scope on every span: serializing them once per export instead of once per span was most of the
 * ingest time of realistic exports.
 */
export function prepareSpan(span: SpanRecord): PreparedSpan {
  const { resource, scope, ...own } = span;
  const members = span[RAW_MEMBERS];
  const tail =
    (typeof members === 'string' ? members : JSON.stringify(own).slice(1, -1)) + groupSuffix(resource, scope);
  return { traceId: span.traceId, sessionId: span.sessionId, tail };
}

/** What ends the stored JSON of every span of a group: `,"resource":…,"scope":…}`. */
export function groupSuffix(resource: unknown, scope: unknown): string {
  return `,"resource":${sharedJson(resource)},"scope":${sharedJson(scope)}}`;
}

/** The member an as-sent span's JSON gets for its session (its own or its resource's). */
export const sessionMember = (sessionId: string | undefined): string =>
  sessionId ? `,"sessionId":${JSON.stringify(sessionId)}` : '';

/** The stored JSON of a prepared span given its sequence. */
export function spanJson(sequence: number, span: PreparedSpan): string {
  return `{"sequence":${sequence},${span.tail}`;
}
