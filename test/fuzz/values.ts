/**
 * Hostile values for generated requests: what a careless or malicious client sends in place of a
 * well-formed string, number or object. Every arbitrary here is plain fast-check; nothing knows a
 * route, so the same shapes reach every parameter and body field of both services.
 */
import fc from 'fast-check';

/** Strings that break naive parsing: separators, encodings, control and astral characters, size. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '..',
      '../..',
      '%',
      '%zz',
      '%00',
      '%2e%2e',
      '\u0000',
      '\ud800',
      '😀',
      '-1',
      '0',
      '1e400',
      'NaN',
      'Infinity',
      '9007199254740993',
      '18446744073709551616',
      'true',
      'null',
      '__proto__',
      'constructor',
      'toString',
      '<script>alert(1)</script>',
      "' OR 1=1 --",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell probe, literally
      '${jndi:ldap://x}',
      'a'.repeat(300),
      'A'.repeat(5000),
    ),
  },
);

/** Numbers the JSON grammar allows that code rarely expects. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-1, 0, -0, 0.5, 2 ** 31, 2 ** 53 + 2, 1e21, -1e308, 1e308, Number.MAX_VALUE, 5e-324),
);

/**
 * JSON nested `depth` levels deep (arrays or objects), the way a stack-overflow probe is built.
 * Kept as a marker until serialized by `toJson`: the test process must not overflow building it.
 */
export class Deep {
  readonly depth: number;
  readonly kind: 'array' | 'object';
  constructor(depth: number, kind: 'array' | 'object') {
    this.depth = depth;
    this.kind = kind;
  }
  text(): string {
    return this.kind === 'array'
      ? `${'['.repeat(this.depth)}1${']'.repeat(this.depth)}`
      : `${'{"a":'.repeat(this.depth)}1${'}'.repeat(this.depth)}`;
  }
}

/** Depths around and far beyond any limit (the limit of pkg/http is 100). */
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.constantFrom(50, 99, 100, 101, 500, 3000, 20000),
    fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>,
  )
  .map(([d, k]) => new Deep(d, k));

/** JSON text of a generated value, deep markers written out in place. */
export function toJson(v: unknown): string {
  const deep: Deep[] = [];
  const text =
    JSON.stringify(v, (_k, x) => {
      if (!(x instanceof Deep)) return x;
      deep.push(x);
      return `\u0000deep${deep.length - 1}\u0000`;
    }) ?? 'null';
  return text.replace(/"\\u0000deep(\d+)\\u0000"/g, (_m, i) => (deep[Number(i)] as Deep).text());
}

/** Any JSON value, small, with hostile leaves and the occasional deep branch. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null)) },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'x'),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  },
  { weight: 1, arbitrary: deepValue },
);

/** Raw body text that is not what it claims: truncated, doubled, binary, empty, huge numbers. */
export const malformedText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '[',
    '{"a":',
    '{"a":1,}',
    'nul',
    '1e99999',
    '"\\ud800"',
    '{"a":1}{"b":2}',
    '\u0000',
  ),
  fc.string({ maxLength: 60 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => {
    const s = JSON.stringify(v) ?? 'null';
    return s.slice(0, Math.max(1, Math.floor(s.length / 2)));
  }),
  fc.constantFrom(50_000, 200_000).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.constantFrom(50_000, 200_000).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
);

/** Content types a client may send with a body, honest or not. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/x-ndjson',
      'application/x-protobuf',
      'application/yaml',
      ';;;',
    ),
  },
);

/** A path segment as a client may put it in a URL: encoded, or raw with what encoding forgot. */
export function segment(value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: value.map(enc) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('%', '%zz', '%2F', '%2e%2e', '..', '.', '%00', '%C0%AE', '~', ';x=1'),
    },
  );
}

/** Percent-encoding that takes any string (a lone surrogate becomes U+FFFD, as a browser would send). */
export const enc = (v: string) =>
  encodeURIComponent(
    v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
