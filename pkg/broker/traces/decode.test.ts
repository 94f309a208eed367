import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../http/index.ts';
import { type DecodedExport, decodeExport } from './decode.ts';
import { scanExportBytes } from './export-scanner.ts';
import { batchTail } from './span-batch.ts';
import { exportOf, hex, rng } from './testdata/exports.ts';

const decode = (text: string | Uint8Array, byteScan = true): DecodedExport =>
  decodeExport(
    {
      body: typeof text === 'string' ? Buffer.from(text) : text,
      proto: false,
      gzip: false,
      maxBytes: 1 << 22,
    },
    { byteScan },
  );

/** Both paths agree exactly: the same refusal, or the same bytes, ids, sessions and rejections. */
function expectSame(text: string | Uint8Array): DecodedExport {
  const scanned = decode(text);
  const parsed = decode(text, false);
  expect(scanned).toEqual(parsed);
  return scanned;
}

const scans = (text: string) => scanExportBytes(Buffer.from(text), MAX_JSON_DEPTH) !== undefined;

const A = 'a'.repeat(32);
const B = 'b'.repeat(16);
const span = (extra = '', ids = `"traceId":"${A}","spanId":"${B}"`) => `{${ids},"name":"x"${extra}}`;
const wrap = (spans: string, resource = '', scope = '') =>
  `{"resourceSpans":[{${resource}"scopeSpans":[{${scope}"spans":[${spans}]}]}]}`;
const sessionAttr = (v: string, key = 'svc.session.id') => `{"key":"${key}","value":{"stringValue":${v}}}`;

/** Small random variations of a generated export's object, so the scan meets more shapes. */
function vary(r: () => number, body: ReturnType<typeof exportOf>): unknown {
  for (const rs of body.resourceSpans as Array<Record<string, unknown>>) {
    const v = r();
    if (v < 0.15)
      rs.resource = { attributes: [{ key: 'svc.session.id', value: { stringValue: 'from-resource' } }] };
    else if (v < 0.2) rs.resource = null;
    else if (v < 0.25) delete rs.resource;
    for (const ss of rs.scopeSpans as Array<Record<string, unknown>>) {
      if (r() < 0.2) delete ss.scope;
      for (const s of ss.spans as Array<Record<string, unknown>>) {
        const w = r();
        if (w < 0.1) s.droppedAttributesCount = 0;
        else if (w < 0.2) s.events = [{ time: -1.5e-3, ok: true, none: null, deep: [[[{}]], []] }];
        else if (w < 0.25) s.attributes = [7, null, { key: 'svc.session.id', value: { intValue: 3 } }];
        else if (w < 0.3) s.name = 12;
        else if (w < 0.35) delete s.spanId;
      }
    }
  }
  return body;
}

describe('decodeExport: the byte scan against JSON.parse', () => {
  it('gives exactly what parsing gives over 400 generated exports, compact and pretty-printed', () => {
    const r = rng(29);
    let scanned = 0;
    for (let n = 0; n < 400; n++) {
      const body = vary(r, exportOf(r));
      for (const text of [JSON.stringify(body), JSON.stringify(body, null, n % 2 ? 2 : '\t')]) {
        expectSame(text);
        if (scans(text)) scanned++;
      }
    }
    // Nearly every generated export is scanned: the path is taken, not merely harmless.
    expect(scanned).toBeGreaterThan(700);
  });

  it('agrees on 6,000 mutations of small exports (bytes deleted, inserted, repeated, cut)', () => {
    const r = rng(31);
    const pieces = [
      '{',
      '}',
      '[',
      ']',
      '"',
      ',',
      ':',
      '\\',
      '\\u00',
      '0',
      '-',
      '.',
      'e',
      'n',
      ' ',
      '\n',
      '\t',
      '\u0001',
      'é',
      '"traceId"',
      '"spans"',
    ];
    let refused = 0;
    for (let n = 0; n < 6000; n++) {
      const text = JSON.stringify(exportOf(r));
      const at = Math.floor(r() * text.length);
      const k = r();
      const piece = pieces[Math.floor(r() * pieces.length)] as string;
      const mutated =
        k < 0.3
          ? text.slice(0, at) + text.slice(at + 1 + Math.floor(r() * 3))
          : k < 0.6
            ? text.slice(0, at) + piece + text.slice(at)
            : k < 0.8
              ? text.slice(0, at) + text.slice(Math.max(0, at - 8), at) + text.slice(at)
              : text.slice(0, at);
      if (!expectSame(mutated).ok) refused++;
    }
    // Most mutations break the JSON: refusals are compared, not only successes.
    expect(refused).toBeGreaterThan(2000);
  });

  it('agrees on invalid UTF-8, control characters, numbers, literals and blanks', () => {
    const ok = span();
    const cases = [
      wrap(ok),
      ` \n\t${wrap(ok)}\r\n `,
      `\ufeff${wrap(ok)}`,
      `${wrap(ok)}x`,
      '',
      '[]',
      'null',
      '{}',
      '{"resourceSpans":null}',
      '{"resourceSpans":{}}',
      '{"resourceSpans":[null,5,[]]}',
      '{"resourceSpans":[{"scopeSpans":[null]}]}',
      wrap(span(',"n":-0,"m":1E+5,"o":0.5e-3,"p":[true,false,null]')),
      ...['01', '1.', '.5', '-', '1e', '+1', '0x10', 'tru', 'nul', 'NaN', '1e+'].map((n) =>
        wrap(span(`,"n":${n}`)),
      ),
      wrap(span(',"s":"tab\there"')),
      wrap(span(',"s":"\\x"')),
      wrap(span(',"s":"\\u12g4"')),
      wrap(span(',"s":"\\ud800 lone"')),
      wrap(span(',"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9"')),
    ];
    for (const text of cases) expectSame(text);
    const pre = wrap(span()).replace('"name":"x"', '"name":"');
    const at = pre.indexOf('"name":"') + 8;
    // Invalid UTF-8 in a name: decoded with U+FFFD by the parsing path, so the scan leaves it to it.
    const bad = Buffer.concat([
      Buffer.from(pre.slice(0, at)),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(pre.slice(at)),
    ]);
    expect(decode(bad)).toEqual(decode(bad, false));
    expect(scanExportBytes(Buffer.from(wrap(ok)), MAX_JSON_DEPTH)).toBeDefined();
  });

  it('reads keys as JSON.parse does: escaped or repeated keys are never taken at face value', () => {
    const evil = `"traceId":"${'c'.repeat(32)}","spanId":"${'d'.repeat(16)}","name":"evil"`;
    const cases = [
      // On the path: the export is parsed instead.
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{${evil}}],"spans":[${span()}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{${evil}}],"span\\u0073":[${span()}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{${evil}}]}]}],"resourceSpans":[{"scopeSpans":[{"spans":[${span()}]}]}]}`,
      `{"resourceSpans":[{"resource":{},"resource":{"attributes":[${sessionAttr('"r"')}]},"scopeSpans":[{"spans":[${span()}]}]}]}`,
      // In a span: that span is parsed alone (the last of repeated members wins).
      wrap(`{${evil},"traceId":"${A}"}`),
      wrap(`{${evil},"trace\\u0049d":"${A}"}`),
      wrap(span(`,"name":"second"`)),
      wrap(span(`,"n\\u0061me":"escaped"`)),
      wrap(span(`,"sessionId":"own","resource":1,"scope":2,"sequence":3`)),
      // In attributes: the session is read as JSON.parse reads it.
      wrap(span(`,"attributes":[${sessionAttr('"first"')},${sessionAttr('"second"')}]`)),
      wrap(span(`,"attributes":[{"key":"svc.session.id","value":{"intValue":1}},${sessionAttr('"str"')}]`)),
      wrap(span(`,"attributes":[${sessionAttr('"esc"', 'svc.session\\u002eid')}]`)),
      wrap(span(`,"attributes":[{"key":"x","key":"svc.session.id","value":{"stringValue":"dup-key"}}]`)),
      wrap(span(`,"attributes":[{"key":"svc.session.id","value":{"stringValue":"a","stringValue":"b"}}]`)),
      wrap(span(`,"attributes":[{"key":"svc.session.id","value":{"stringValue":"a"},"value":{}}]`)),
      wrap(span(`,"attributes":[{"value":{"stringValue":"before"},"key":"svc.session.id"}]`)),
      wrap(span(`,"attributes":[${sessionAttr('"with \\" quote é"')}]`)),
      wrap(
        span(`,"attributes":[${sessionAttr('""')}]`),
        `"resource":{"attributes":[${sessionAttr('"r"')}]},`,
      ),
      wrap(span(`,"attributes":{"not":"an array"}`)),
    ];
    for (const text of cases) {
      const out = expectSame(text);
      expect(out.ok).toBe(true);
    }
  });

  it('takes ids as stored only when canonical, and parses the other spans alone', () => {
    const ids = [
      `"traceId":"${A.toUpperCase()}","spanId":"${B}"`,
      `"traceId":"${A}","spanId":"${Buffer.from(B, 'hex').toString('base64')}"`,
      `"traceId":"${'0'.repeat(32)}","spanId":"${B}"`,
      `"traceId":"${A}","spanId":"${B}","parentSpanId":""`,
      `"traceId":"${A}","spanId":"${B}","parentSpanId":"${'0'.repeat(16)}"`,
      `"traceId":"${A}","spanId":"${B}","parentSpanId":"zz"`,
      `"traceId":"${A}"`,
    ];
    for (const i of ids) expectSame(wrap(`${span('', i)},${span()}`));
    const out = expectSame(wrap(`${span('', ids[2])},${span()},null,[1]`));
    expect(out.ok && [out.rejected, out.batch.ends.length]).toEqual([3, 1]);
    expect(out.ok && out.errors[0]).toContain('span 0: traceId');
  });

  it('stores a canonical span byte for byte as the client wrote it', () => {
    const sent = `{ "name" : "x é",\n  "spanId":"${B}", "traceId":"${A}", "kind":3 }`;
    const out = expectSame(
      wrap(sent, `"resource":{"attributes":[${sessionAttr('"s1"')}]},`, '"scope":{"name":"n"},'),
    );
    expect(out.ok && batchTail(out.batch, 0)).toBe(
      ` "name" : "x é",\n  "spanId":"${B}", "traceId":"${A}", "kind":3 ,"sessionId":"s1","resource":{"attributes":[${sessionAttr('"s1"')}]},"scope":{"name":"n"}}`,
    );
  });

  it('applies the depth limit as the parsing path does, at and past it', () => {
    // The span object is the 7th open container; an attribute value nests from there.
    const nested = (n: number) => wrap(span(`,"deep":${'['.repeat(n)}${']'.repeat(n)}`));
    for (const n of [MAX_JSON_DEPTH - 8, MAX_JSON_DEPTH - 7, MAX_JSON_DEPTH - 6, 5000]) expectSame(nested(n));
    expect(decode(nested(MAX_JSON_DEPTH - 7)).ok).toBe(true);
    expect(decode(nested(MAX_JSON_DEPTH - 6))).toMatchObject({ ok: false, code: 'json_too_deep' });
  });

  it('packs a large export: every span, its session and trace id', () => {
    const r = rng(5);
    const traceId = hex(r, 32);
    const spans = Array.from({ length: 2000 }, (_, i) =>
      span(
        `,"attributes":[${sessionAttr(`"s${i % 3}"`)}]`,
        `"traceId":"${traceId}","spanId":"${hex(r, 16)}"`,
      ),
    );
    const out = expectSame(wrap(spans.join(',')));
    expect(out.ok && out.batch.ends.length).toBe(2000);
    expect(out.ok && out.batch.sessions).toEqual(['s0', 's1', 's2']);
    expect(out.ok && JSON.parse(`{"sequence":1,${batchTail(out.batch, 1999)}`)).toMatchObject({
      traceId,
      sessionId: 's1',
      name: 'x',
    });
  });
});
