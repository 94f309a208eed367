import { describe, expect, it } from 'vitest';
import { flattenRequest, prepareSpan, RAW_MEMBERS, spanJson } from './otlp.ts';
import { rawSpanGroups, scanExport } from './raw-spans.ts';
import { exportOf, rng } from './testdata/exports.ts';

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
