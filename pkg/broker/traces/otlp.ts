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
  [k: string]: unknown;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * An id as lowercase hex. OTLP/JSON uses hex; some clients send base64 (the protobuf JSON mapping),
 * which is accepted when it decodes to the right length.
 */
export function normalizeId(v: unknown, bytes: 8 | 16): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
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

export interface Flattened {
  spans: SpanRecord[];
  rejected: number;
  errors: string[];
}

/** Walks `resourceSpans[].scopeSpans[].spans[]`, validating each span; bad spans are counted, not fatal. */
export function flattenRequest(req: unknown): Flattened {
  if (!req || typeof req !== 'object' || Array.isArray(req))
    throw new TypeError('the body must be an ExportTraceServiceRequest object');
  const rs = (req as { resourceSpans?: unknown }).resourceSpans ?? [];
  if (!Array.isArray(rs)) throw new TypeError('resourceSpans must be an array');
  const out: Flattened = { spans: [], rejected: 0, errors: [] };
  for (const r of rs as Array<Record<string, unknown>>) {
    const resource = (r?.resource ?? {}) as Record<string, unknown>;
    const resourceSession = sessionIn(resource.attributes);
    // One object per resource and per scope, shared by their spans: the store serializes each once.
    const sharedResource = { attributes: resource.attributes ?? [] };
    const scopes = r?.scopeSpans ?? [];
    if (!Array.isArray(scopes)) throw new TypeError('scopeSpans must be an array');
    for (const s of scopes as Array<Record<string, unknown>>) {
      const scope = s?.scope ?? {};
      const spans = s?.spans ?? [];
      if (!Array.isArray(spans)) throw new TypeError('spans must be an array');
      for (const [i, raw] of (spans as Array<Record<string, unknown>>).entries()) {
        const problem = validate(raw);
        if (problem) {
          out.rejected++;
          if (out.errors.length < 5) out.errors.push(`span ${i}: ${problem}`);
          continue;
        }
        const traceId = normalizeId(raw.traceId, 16) as string;
        const spanId = normalizeId(raw.spanId, 8) as string;
        const parentSpanId = normalizeId(raw.parentSpanId, 8);
        const sessionId = sessionIn(raw.attributes) ?? resourceSession;
        const { traceId: _t, spanId: _s, parentSpanId: _p, ...rest } = raw;
        out.spans.push({
          traceId,
          spanId,
          ...(parentSpanId ? { parentSpanId } : {}),
          ...rest,
          name: raw.name as string,
          resource: sharedResource,
          scope,
          ...(sessionId ? { sessionId } : {}),
        });
      }
    }
  }
  return out;
}

function validate(raw: Record<string, unknown>): string | undefined {
  if (!raw || typeof raw !== 'object') return 'not an object';
  if (!normalizeId(raw.traceId, 16)) return 'traceId must be 16 non-zero bytes (32 hex characters)';
  if (!normalizeId(raw.spanId, 8)) return 'spanId must be 8 non-zero bytes (16 hex characters)';
  if (raw.parentSpanId !== undefined && raw.parentSpanId !== '' && !normalizeId(raw.parentSpanId, 8))
    return 'parentSpanId must be 8 bytes (16 hex characters)';
  if (typeof raw.name !== 'string') return 'name must be a string';
  if (raw.attributes !== undefined && !Array.isArray(raw.attributes)) return 'attributes must be an array';
  return undefined;
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

/**
 * The stored JSON of a span: `{"sequence":N, …its own fields…, "resource":…, "scope":…}`. An
 * agent's export repeats one resource (service, SDK, pod attributes) and scope on every span;
 * serializing them once per export instead of once per span was most of the ingest time of
 * realistic exports.
 */
export function spanJson(sequence: number, span: SpanRecord): string {
  const { resource, scope, ...own } = span;
  return `{"sequence":${sequence},${JSON.stringify(own).slice(1, -1)},"resource":${sharedJson(resource)},"scope":${sharedJson(scope)}}`;
}
