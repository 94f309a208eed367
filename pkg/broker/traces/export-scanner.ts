/**
 * One pass over the bytes of an OTLP/JSON export that validates the JSON and finds what ingest
 * needs — each scope's resource and scope, each span's extent, ids and session — without building
 * the export's object tree: `JSON.parse` of the whole export (and the scan for the spans' text
 * after it) were most of the ingest time of agent-shaped exports.
 *
 * It answers only for what it can answer exactly; anything else — invalid JSON, invalid UTF-8, too
 * deep, a path key escaped or repeated, a path value of another type — gives `undefined`, and the
 * caller decodes the export with `JSON.parse` as before (which also words the error). A span it
 * cannot take as sent (ids not canonical, a member the store sets, an escaped or repeated member it
 * reads) is flagged, and the caller parses that span's text alone.
 */

import { ascii, JsonBytesReader, KeyTable, NOT_READ, type Range } from './json-bytes.ts';
import { isCanonicalId } from './otlp.ts';

export type { Range };

export interface ScannedSpan {
  /** The span value's bytes, braces included. */
  range: Range;
  /** Set when the span can be stored as sent: its trace id, canonical. */
  traceId: string | undefined;
  /** The JSON string token of its session attribute's value, when it has one. */
  session: Range | undefined;
}

/** The spans of one scope, with the value ranges of their resource and scope (when present). */
export interface ScannedGroup {
  resource: Range | undefined;
  scope: Range | undefined;
  spans: ScannedSpan[];
}

// The keys the scan tells apart, by what they are.
const KEYS = new KeyTable([
  'resourceSpans',
  'resource',
  'scopeSpans',
  'scope',
  'spans',
  'traceId',
  'spanId',
  'parentSpanId',
  'name',
  'attributes',
  'sequence',
  'sessionId',
  'key',
  'value',
  'stringValue',
]);
const [RESOURCE_SPANS, RESOURCE, SCOPE_SPANS, SCOPE, SPANS, TRACE_ID, SPAN_ID, PARENT_SPAN_ID, NAME] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8,
];
const [ATTRIBUTES, SEQUENCE, SESSION_ID, KEY, VALUE, STRING_VALUE] = [9, 10, 11, 12, 13, 14];
const SESSION_KEY = ascii('svc.session.id');

/** Scans `b` (which must be valid UTF-8); undefined when the export needs `JSON.parse`. */
export function scanExportBytes(b: Uint8Array, maxDepth: number): ScannedGroup[] | undefined {
  try {
    return new ExportScanner(b, maxDepth).export();
  } catch (err) {
    if (err === NOT_READ) return undefined;
    throw err;
  }
}

/** The containers on the path to spans each have their own method; the rest is read by `value`. */
class ExportScanner extends JsonBytesReader {
  readonly groups: ScannedGroup[] = [];

  constructor(b: Uint8Array, maxDepth: number) {
    super(b, maxDepth, KEYS);
  }

  export(): ScannedGroup[] {
    let seen = false;
    if (this.enter(0x7b, 1))
      do {
        if (this.pathKey() !== RESOURCE_SPANS) this.value(1);
        else {
          if (seen) throw NOT_READ;
          seen = true;
          if (this.enter(0x5b, 2))
            do this.resourceSpan();
            while (this.more(0x5d));
        }
      } while (this.more(0x7d));
    this.skipWs();
    if (this.i !== this.b.length || !seen) throw NOT_READ;
    return this.groups;
  }

  resourceSpan(): void {
    let resource: Range | undefined;
    let groups: ScannedGroup[] | undefined;
    if (this.enter(0x7b, 3))
      do {
        const k = this.pathKey();
        if (k === RESOURCE) {
          if (resource) throw NOT_READ;
          resource = this.valueRange(3);
        } else if (k === SCOPE_SPANS) {
          if (groups) throw NOT_READ;
          groups = [];
          if (this.enter(0x5b, 4))
            do groups.push(this.scopeSpan());
            while (this.more(0x5d));
        } else this.value(3);
      } while (this.more(0x7d));
    for (const g of groups ?? []) {
      g.resource = resource;
      this.groups.push(g);
    }
  }

  scopeSpan(): ScannedGroup {
    const g: ScannedGroup = { resource: undefined, scope: undefined, spans: [] };
    let spans = false;
    if (this.enter(0x7b, 5))
      do {
        const k = this.pathKey();
        if (k === SCOPE) {
          if (g.scope) throw NOT_READ;
          g.scope = this.valueRange(5);
        } else if (k === SPANS) {
          if (spans) throw NOT_READ;
          spans = true;
          if (this.enter(0x5b, 6))
            do g.spans.push(this.span());
            while (this.more(0x5d));
        } else this.value(5);
      } while (this.more(0x7d));
    return g;
  }

  /** A span: any value; only an object with every member it reads plain can be taken as sent. */
  span(): ScannedSpan {
    const start = this.skipWs();
    const s: ScannedSpan = { range: [start, start], traceId: undefined, session: undefined };
    if (this.b[start] !== 0x7b) {
      this.value(6);
      s.range[1] = this.i;
      return s;
    }
    let plain = true;
    let seen = 0;
    if (this.enter(0x7b, 7))
      do {
        const k = this.key();
        if (this.escaped) plain = false;
        // A member read twice is read as JSON.parse reads it (the last wins) by the caller.
        if (k >= 0 && k < 31) {
          if (seen & (1 << k)) plain = false;
          seen |= 1 << k;
        }
        if (k === TRACE_ID) {
          s.traceId = this.hexId(32, 7);
          if (s.traceId === undefined) plain = false;
        } else if (k === SPAN_ID || k === PARENT_SPAN_ID) {
          if (!this.hexId(16, 7)) plain = false;
        } else if (k === NAME) {
          if (this.peek() !== 0x22) plain = false;
          this.value(7);
        } else if (k === ATTRIBUTES) {
          const session = this.attributes();
          if (session === false) plain = false;
          else s.session = session;
        } else {
          // Members the store sets itself: such a span is stored re-serialized.
          if (k === SEQUENCE || k === RESOURCE || k === SCOPE || k === SESSION_ID) plain = false;
          this.value(7);
        }
      } while (this.more(0x7d));
    s.range[1] = this.i;
    const required = (1 << TRACE_ID) | (1 << SPAN_ID) | (1 << NAME);
    if (!plain || (seen & required) !== required) s.traceId = undefined;
    return s;
  }

  /**
   * A span's attributes (the cursor at the value): the session attribute's value token, undefined
   * without one, false when a member it reads is escaped or repeated (or the value is no array).
   */
  attributes(): Range | undefined | false {
    if (this.peek() !== 0x5b) {
      this.value(7);
      return false;
    }
    let session: Range | undefined;
    let plain = true;
    if (this.enter(0x5b, 8))
      do {
        if (this.peek() !== 0x7b) {
          this.value(8);
          continue;
        }
        let isSession = false;
        let value: Range | undefined;
        let seen = 0;
        if (this.enter(0x7b, 9))
          do {
            const k = this.key();
            if (this.escaped) plain = false;
            if (k === KEY) {
              if (seen & 1) plain = false;
              seen |= 1;
              const start = this.skipWs();
              isSession = false;
              if (this.b[start] === 0x22) {
                this.string();
                if (this.escaped) plain = false;
                isSession = this.sameBytes(start + 1, this.i - 1, SESSION_KEY);
              } else this.value(9);
            } else if (k === VALUE) {
              if (seen & 2) plain = false;
              seen |= 2;
              const v = this.attributeValue();
              if (v === false) plain = false;
              else value = v;
            } else this.value(9);
          } while (this.more(0x7d));
        // The first attribute with the key and a string value names the session (as `sessionIn`).
        if (isSession && value && !session) session = value;
      } while (this.more(0x5d));
    return plain ? session : false;
  }

  /** An attribute's `value`: its stringValue token if it has one, false when ambiguous. */
  attributeValue(): Range | undefined | false {
    if (this.peek() !== 0x7b) {
      this.value(9);
      return undefined;
    }
    let out: Range | undefined | false;
    let seen = false;
    if (this.enter(0x7b, 10))
      do {
        const k = this.key();
        if (this.escaped) out = false;
        if (k !== STRING_VALUE) {
          this.value(10);
          continue;
        }
        if (seen) out = false;
        seen = true;
        const start = this.skipWs();
        const isString = this.b[start] === 0x22;
        this.value(10);
        if (out !== false) out = isString ? [start, this.i] : undefined;
      } while (this.more(0x7d));
    return out;
  }

  /** A key on the path to spans: written with an escape, it could be a path key spelled otherwise. */
  pathKey(): number {
    const k = this.key();
    if (this.escaped) throw NOT_READ;
    return k;
  }

  /** The value (read either way) when it is an id as stored: `n` lowercase hex digits, not all zeros. */
  hexId(n: number, depth: number): string | undefined {
    const start = this.skipWs();
    if (this.b[start] !== 0x22) {
      this.value(depth);
      return undefined;
    }
    this.string();
    if (this.escaped || this.i - start !== n + 2) return undefined;
    const id = this.latin1(start + 1, start + 1 + n);
    return isCanonicalId(id, n) ? id : undefined;
  }
}
