/**
 * The spec's "trace redaction": exported spans are scrubbed like log records, with the same keys
 * and token patterns (redact.ts is the one source of both). A span exporter wrapper rather than a
 * span processor, because a finished span is read-only: the spans handed to the real exporter are
 * redacted views, the recorded ones stay untouched. Covered: span names, attribute keys and values
 * (also of events — `exception.message`, `exception.stacktrace` — and links), the status message.
 * Not covered, as in logs: query inputs, prompts and tool payloads, which are no secrets by format.
 */
import type { Attributes, AttributeValue, Link, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';
import { isSecretKey, REDACTED, redactString } from './redact.ts';

/** A secret key by itself or as the last segment of a dotted name (`http.request.header.authorization`). */
const secretAttribute = (key: string) => isSecretKey(key) || isSecretKey(key.slice(key.lastIndexOf('.') + 1));

function redactValue(v: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof v === 'string') return redactString(v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? redactString(x) : x)) as AttributeValue;
  return v;
}

/** Attributes with secret keys masked and token formats replaced in every string value. */
export function redactAttributes(attrs: Attributes | undefined): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs ?? {}))
    out[k] = secretAttribute(k) && v !== undefined && v !== null ? REDACTED : redactValue(v);
  return out;
}

/** A redacted view of a finished span: what is not overridden (ids, times, resource) is the span's own. */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  const status: SpanStatus =
    span.status.message === undefined
      ? span.status
      : { ...span.status, message: redactString(span.status.message) };
  const events: TimedEvent[] = span.events.map((e) => ({
    ...e,
    name: redactString(e.name),
    ...(e.attributes ? { attributes: redactAttributes(e.attributes) } : {}),
  }));
  const links: Link[] = span.links.map((l) => ({
    ...l,
    ...(l.attributes ? { attributes: redactAttributes(l.attributes) } : {}),
  }));
  // The span's methods (spanContext) and every other field are reached through the prototype.
  return Object.create(span, {
    name: { value: redactString(span.name), enumerable: true },
    attributes: { value: redactAttributes(span.attributes), enumerable: true },
    events: { value: events, enumerable: true },
    links: { value: links, enumerable: true },
    status: { value: status, enumerable: true },
  }) as ReadableSpan;
}

/** Wraps an exporter so that everything it sends has been through `redactSpan`. */
export class RedactingSpanExporter implements SpanExporter {
  readonly #inner: SpanExporter;

  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.#inner.export(spans.map(redactSpan), done);
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
