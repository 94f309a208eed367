import { describe, expect, it } from 'vitest';
import { flattenRequest, prepareSpan, RAW_MEMBERS, spanJson } from './otlp.ts';
import { rawSpanGroups, scanExport } from './raw-spans.ts';

// A small seeded generator: the same cases on every run.
function rng(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

const hex = (r: () => number, n: number) =>
  Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');

function spanOf(r: () => number, i: number): Record<string, unknown> {
  const span: Record<string, unknown> = {
    traceId: hex(r, 32),
    spanId: hex(r, 16),
    name: ['chat gpt-4o', 'tool "search"', 'naïve 漢字 😀', 'brace { [ in name ] }', 'back\\slash'][i % 5],
    startTimeUnixNano: '1700000000000000000',
    attributes: [
      { key: 'gen_ai.system', value: { stringValue: 'openai' } },
      { key: 'spans', value: { arrayValue: { values: [{ stringValue: '{"spans":[]}' }] } } },
    ],
    events: [{ name: 'gen_ai.content.prompt', attributes: [{ key: 'k', value: { intValue: '3' } }] }],
    status: { code: 1 },
  };
  const v = r();
  if (v < 0.1) span.parentSpanId = '';
  else if (v < 0.2) span.traceId = (span.traceId as string).toUpperCase();
  else if (v < 0.3) span.spanId = Buffer.from(hex(r, 16), 'hex').toString('base64');
  else if (v < 0.35) span.resource = { own: true };
  else if (v < 0.4) span.sessionId = 'own-field';
  else if (v < 0.45) span.traceId = '0'.repeat(32);
  else if (v < 0.7) span.parentSpanId = hex(r, 16);
  if (r() < 0.2) span.attributes = [{ key: 'svc.session.id', value: { stringValue: `s-${i}` } }];
  return span;
}

function exportOf(r: () => number) {
  return {
    resourceSpans: Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] },
      scopeSpans: Array.from({ length: 1 + Math.floor(r() * 2) }, () => ({
        scope: { name: 'berth', version: '1' },
        spans: Array.from({ length: Math.floor(r() * 5) }, (_, i) => spanOf(r, i)),
      })),
    })),
  };
}

/** What a reader of the stored JSON gets, through both paths. */
function stored(text: string, withRaw: boolean) {
  const flat = flattenRequest(JSON.parse(text), withRaw ? rawSpanGroups(text) : undefined);
  return {
    json: flat.spans.map((s, i) => JSON.parse(spanJson(i + 1, prepareSpan(s)))),
    raw: flat.spans.filter((s) => s[RAW_MEMBERS] !== undefined).length,
    rejected: flat.rejected,
  };
}

describe('spans stored as sent', () => {
  it('store exactly what re-serializing stores, compact or pretty-printed, over 300 generated exports', () => {
    const r = rng(17);
    let asSent = 0;
    for (let n = 0; n < 300; n++) {
      const body = exportOf(r);
      for (const text of [JSON.stringify(body), JSON.stringify(body, null, n % 3 === 0 ? 2 : '\t')]) {
        const fast = stored(text, true);
        const slow = stored(text, false);
        expect(fast.json).toEqual(slow.json);
        expect(fast.rejected).toBe(slow.rejected);
        asSent += fast.raw;
      }
    }
    // Most generated spans are canonical: the path is taken, not merely harmless.
    expect(asSent).toBeGreaterThan(500);
  });

  it('keeps a canonical span as the client wrote it', () => {
    const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","spanId":"${'b'.repeat(16)}","traceId":"${'a'.repeat(32)}","kind":3}]}]}]}`;
    const [span] = flattenRequest(JSON.parse(text), rawSpanGroups(text)).spans;
    expect(spanJson(7, prepareSpan(span as never))).toBe(
      `{"sequence":7,"name":"x","spanId":"${'b'.repeat(16)}","traceId":"${'a'.repeat(32)}","kind":3,"resource":{"attributes":[]},"scope":{}}`,
    );
  });

  it("never lets a span's own sequence member shadow the store's", () => {
    const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","name":"x","sequence":9}]}]}]}`;
    const [span] = flattenRequest(JSON.parse(text), rawSpanGroups(text)).spans;
    expect(JSON.parse(spanJson(3, prepareSpan(span as never))).sequence).toBe(3);
  });

  it('gives up on texts that could read differently from what was parsed', () => {
    const span = `{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","name":"x"}`;
    const bad = `{"traceId":"${'c'.repeat(32)}","spanId":"${'d'.repeat(16)}","name":"evil"}`;
    const cases = [
      // The last of duplicate keys wins in JSON.parse.
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${bad}],"spans":[${span}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${bad}]}],"scopeSpans":[{"spans":[${span}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${bad}]}]}],"resourceSpans":[{"scopeSpans":[{"spans":[${span}]}]}]}`,
      // An escaped key names the same member.
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${bad}],"span\\u0073":[${span}]}]}]}`,
    ];
    for (const text of cases) {
      expect(rawSpanGroups(text)).toBeUndefined();
      const [stored] = flattenRequest(JSON.parse(text), rawSpanGroups(text)).spans;
      expect(stored?.name).toBe('x');
      expect(JSON.parse(spanJson(1, prepareSpan(stored as never))).name).toBe('x');
    }
  });

  it('lines texts up with parsed spans only when the shapes match', () => {
    const span = `{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","name":"x"}`;
    // A null resource entry shifts nothing: the shapes differ, so every span is re-serialized.
    const text = `{"resourceSpans":[null,{"scopeSpans":[{"spans":[${span},[1],null]}]}]}`;
    const flat = flattenRequest(JSON.parse(text), rawSpanGroups(text));
    expect(flat.spans).toHaveLength(1);
    expect(flat.spans[0]?.[RAW_MEMBERS]).toBeUndefined();
    expect(flat.rejected).toBe(2);
  });
});

describe('scanExport', () => {
  it('checks the depth limit in the same pass, strings and escapes skipped', () => {
    const nested = (n: number) => `{"resourceSpans":[${'['.repeat(n)}${']'.repeat(n)}]}`;
    // The root object and resourceSpans are two levels.
    expect(scanExport(nested(98), 100).tooDeep).toBe(false);
    expect(scanExport(nested(99), 100).tooDeep).toBe(true);
    const inStrings = JSON.stringify({ resourceSpans: [], note: '['.repeat(500), q: '\\"[[' });
    expect(scanExport(inStrings, 100)).toEqual({ tooDeep: false, groups: [] });
  });
});
