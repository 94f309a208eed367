/** Generated OTLP/JSON exports for the differential tests of the span paths. */

// A small seeded generator: the same cases on every run.
export function rng(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

export const hex = (r: () => number, n: number) =>
  Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');

export function spanOf(r: () => number, i: number): Record<string, unknown> {
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

export function exportOf(r: () => number) {
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
