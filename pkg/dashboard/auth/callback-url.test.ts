import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { finalLocation, isSafeLocalPath, safeCallbackUrl } from './callback-url.ts';

const root = {
  baseUrl: 'https://berth.example.com',
  basePath: '',
  allowedOrigins: ['https://hub-b.example'],
};
const tenant = { ...root, baseUrl: 'https://berth.example.com/team-a', basePath: '/team-a' };

/**
 * Inputs that normalise to a path starting `//` or `/\` (read as another host by browsers), and
 * their spellings: dot segments, encoded dots, the own origin spelled out, backslashes, tabs and
 * newlines, and each once more percent-encoded as a query parameter would carry it.
 */
const hostile = (base: string) => [
  '//evil.example/x',
  '/\\evil.example',
  '\\\\evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  ' //evil.example',
  `${base}/.//evil.example`,
  `${base}/./\\evil.example`,
  `${base}/a/..//evil.example`,
  `${base}/a/b/../..//evil.example`,
  `${base}/%2e//evil.example`,
  `${base}/%2E%2E//evil.example`,
  `${base}/a/%2e%2e//evil.example`,
  `${base}/.%2f/evil.example`,
  `${base}//evil.example`,
  `https://berth.example.com${base}//evil.example`,
  `https://berth.example.com${base}/.//evil.example`,
  `https://berth.example.com${base}/a/..//evil.example`,
  `https://berth.example.com${base}/%2e//evil.example`,
  `https://berth.example.com/${base}//evil.example`,
  'https:evil.example',
  'https:/evil.example',
  '/%5Cevil.example',
  '/%2F/evil.example',
  '/%09/evil.example',
  `${base}/%2f%2fevil.example`,
  'https://evil.example/steal',
  'http://evil.example',
  'javascript:alert(1)',
  'data:text/html,hi',
];

/** What the browser would do with the answer as a Location: it must stay on the dashboard's origin. */
function landsOn(location: string, base: string): string {
  return new URL(location, `https://berth.example.com${base}/x`).origin;
}

describe('safeCallbackUrl', () => {
  it.each([
    [undefined, '/'],
    ['', '/'],
    ['/queries?x=1#y', '/queries?x=1#y'],
    ['https://berth.example.com/agents?q=1', '/agents?q=1'],
    ['https://hub-b.example/team-b/chat', 'https://hub-b.example/team-b/chat'],
    ['https://evil.example/steal', '/'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['\\\\evil.example', '/'],
    ['/\t/evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['data:text/html,hi', '/'],
    ['http://berth.example.com/x', '/'], // another scheme is another origin
    ['https://berth.example.com.evil.example/', '/'],
    ['https://hub-b.example.evil/x', '/'],
    ['/api/auth/signin', '/'], // would loop
    ['not a url', '/'],
    // The cases: each used to end as `Location: //evil.com`.
    ['/.//evil.com', '/'],
    ['/a/..//evil.com', '/'],
    ['/%2e//evil.com', '/'],
    ['https://berth.example.com//evil.com', '/'],
    // Dot segments that stay on the dashboard are resolved, not refused.
    ['/a/../queries', '/queries'],
    ['/./agents', '/agents'],
  ])('at the root: %j → %s', (raw, expected) => expect(safeCallbackUrl(raw, root)).toBe(expected));

  it.each([
    ['/team-a/queries', '/team-a/queries'],
    ['/team-a', '/team-a/'],
    ['/team-a?x=1', '/team-a/?x=1'],
    ['/team-b/queries', '/team-a/'], // another tenant's dashboard is not this one's to send to
    ['/team-abc', '/team-a/'],
    ['/queries', '/team-a/'],
    ['https://berth.example.com/team-a/chat', '/team-a/chat'],
    ['/team-a/api/auth/callback/x', '/team-a/'],
    ['/team-a/x/../chat', '/team-a/chat'],
    ['/team-a/../team-b/chat', '/team-a/'],
  ])('under a base path: %j → %s', (raw, expected) => expect(safeCallbackUrl(raw, tenant)).toBe(expected));

  it.each([
    ['root', root],
    ['tenant', tenant],
  ] as const)('never answers a location off the origin or outside the base path (%s)', (_n, policy) => {
    for (const raw of [...hostile(policy.basePath), ...hostile('')]) {
      for (const input of [raw, encodeURI(raw), decodeURIComponent(raw.replaceAll('%', '%25'))]) {
        const out = safeCallbackUrl(input, policy);
        expect(stays(out, policy), `${JSON.stringify(input)} → ${out}`).toBe(true);
      }
    }
  });

  it.each([
    ['root', root],
    ['tenant', tenant],
  ] as const)('keeps every generated input on the dashboard (%s)', (_n, policy) => {
    const piece = fc.constantFrom(
      '/',
      '//',
      '\\',
      '.',
      '..',
      '%2e',
      '%2E',
      '%2f',
      '%5c',
      '%09',
      '\t',
      'evil.com',
      'a',
      ':',
      '@',
      '?',
      '#',
      'https:',
      'https://berth.example.com',
      policy.basePath,
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const out = safeCallbackUrl(pieces.join('').replaceAll('\\t', '\t'), policy);
        return stays(out, policy);
      }),
      { numRuns: 5000 },
    );
  });
});

/** The answer is the home, or a safe local path, or an allowed origin: never elsewhere. */
function stays(out: string, policy: typeof root): boolean {
  if (out.startsWith('https://hub-b.example/')) return true;
  return isSafeLocalPath(out, policy) && landsOn(out, policy.basePath) === 'https://berth.example.com';
}

describe('isSafeLocalPath and finalLocation (the output check)', () => {
  it.each([
    ['/', true],
    ['/queries?x=1#y', true],
    ['//evil.com', false],
    ['/\\evil.com', false],
    ['/%2e//evil.com', false], // it reads back as //evil.com
    ['/./', false],
    ['/a\tb', false],
    ['evil.com', false],
    ['https://berth.example.com/x', false],
  ])('at the root: %j → %s', (loc, ok) => expect(isSafeLocalPath(loc, root)).toBe(ok));

  it.each([
    ['/team-a/', true],
    ['/team-a/chat', true],
    ['/team-a', false],
    ['/team-a//evil.com', false],
    ['/team-a/\\evil.com', false],
    ['/team-b/', false],
    ['/', false],
  ])('under a base path: %j → %s', (loc, ok) => expect(isSafeLocalPath(loc, tenant)).toBe(ok));

  it('sends a stored destination that fails the check home instead', () => {
    expect(finalLocation('//evil.com', root)).toBe('/');
    expect(finalLocation('/team-a//evil.com', tenant)).toBe('/team-a/');
    expect(finalLocation('/queries', root)).toBe('/queries');
    expect(finalLocation('https://hub-b.example/x', root)).toBe('https://hub-b.example/x');
    expect(finalLocation('https://evil.example/x', root)).toBe('/');
  });
});
