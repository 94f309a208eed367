import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubJwts, scrubTokens } from './tokens.ts';

/** CPU milliseconds of the fastest of `runs` calls: other work on the machine inflates wall time. */
function cpuMs(f: () => void, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    f();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

const repeatTo = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

/**
 * Time for 1 MB over time for 100 KB of the same shape: ~10 when linear, ~100 when quadratic. The
 * 100 KB figure is floored at 1 ms so that timer noise on a fast shape cannot fail the ratio.
 */
function scaling(unit: string): { small: number; large: number; ratio: number } {
  const small = cpuMs(() => scrubTokens(repeatTo(unit, 100_000)), 5);
  const large = cpuMs(() => scrubTokens(repeatTo(unit, 1_000_000)), 3);
  return { small, large, ratio: large / Math.max(small, 1) };
}

/** The worst shape of every pattern, old and new (the old URL pattern took 3.4 s for 64 KB of `a-`). */
const WORST_SHAPES = [
  'a-',
  'a.',
  'eyJ',
  'eyJ-',
  'eyJa.',
  'eyJaaaaa.',
  'eyJaaaaaaa.bbbbb',
  'Bearer ',
  'Bearer xxxxxxx ',
  'Basic\t',
  'sk-',
  'sk-svc-',
  'sk-proj-',
  'password=',
  'password ',
  'password:"',
  'api_key\\"',
  'x://user:',
  'x://u',
  'a://b:c',
  '-----BEGIN RSA PRIVATE KEY-----',
  '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n',
  '-----END RSA PRIVATE KEY-----',
  'ghp_',
  'AKIA',
  'xoxb-',
  'AIza',
  'hf_',
  'glpat-',
  'gsk_',
  'xai-',
  'sk_live_',
  'github_pat_',
];

// 10× the input: linear work takes ~10× the time, quadratic ~100×. The bound sits between, with room
// for a loaded machine's noise on the small (1–2 ms) run (a ratio of 20.04 failed a CI run at 20).
const LINEAR_BOUND = 40;

describe('token patterns run in linear time', () => {
  it('redacts 1 MB of each pattern’s worst shape in time proportional to its length', () => {
    for (const unit of WORST_SHAPES) {
      const { small, large, ratio } = scaling(unit);
      expect(ratio, `${JSON.stringify(unit)}: 100 KB ${small} ms, 1 MB ${large} ms`).toBeLessThan(
        LINEAR_BOUND,
      );
    }
    // A single huge token after each prefix: scanned once, not once per start.
    for (const prefix of ['Bearer ', 'eyJ', 'x://', 'password=', '-----BEGIN RSA PRIVATE KEY-----', 'sk-']) {
      const { small, large, ratio } = scaling(`${prefix}${'A'.repeat(2_000_000)}`);
      expect(ratio, `${prefix}…: 100 KB ${small} ms, 1 MB ${large} ms`).toBeLessThan(LINEAR_BOUND);
    }
  });

  it('stays linear on generated shapes (fragments of every pattern, repeated)', () => {
    const fragment = fc.constantFrom(
      ...['a', 'A', '0', '-', '.', '_', ' ', '\n', '"', "'", '\\', '=', ':', '/', '@', '://', 'eyJ'],
      ...['sk-', 'sk-svc-', 'Bearer ', 'Basic ', 'password', 'access_token', 'ghp_', 'AKIA', 'xoxb-'],
      ...['-----BEGIN RSA PRIVATE KEY-----', '-----END RSA PRIVATE KEY-----', 'hf_', 'xai-', 'rk_test_'],
    );
    fc.assert(
      fc.property(fc.array(fragment, { minLength: 1, maxLength: 6 }), (parts) => {
        const { small, large, ratio } = scaling(parts.join(''));
        expect(ratio, `${JSON.stringify(parts)}: 100 KB ${small} ms, 1 MB ${large} ms`).toBeLessThan(
          LINEAR_BOUND,
        );
      }),
      { numRuns: 25 },
    );
  });
});

describe('the JWT scanner', () => {
  // The pattern it replaces: right, but quadratic on runs such as `eyJ-eyJ-eyJ-…`.
  const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

  it('replaces exactly what the JWT pattern does', () => {
    const piece = fc.constantFrom(
      ...['eyJ', 'eyJhbGciOi', 'eyJ-', '-eyJ', '.', '..', '-', '_', 'a', 'abcde', 'abcdefgh', 'Z9'],
      ...[' ', '"', '=', 'é', '\n', 'x.y', 'sig_-'],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(scrubJwts(text)).toBe(text.replace(JWT, REDACTED));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds JWTs wherever the pattern did: after a dash, a dot, a quote, at the start', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
    for (const text of [jwt, `x-${jwt}`, `a.${jwt}.more`, `"${jwt}"`, `token=${jwt}&x=1`]) {
      expect(scrubJwts(text), text).not.toContain('c2lnbmF0dXJl');
    }
    expect(scrubJwts(`abc${jwt}`)).toBe(`abc${jwt}`); // no word boundary: not a token start
  });
});

describe('broadened patterns', () => {
  it('redacts a URL password whatever precedes `://`, and a PEM key that never ends', () => {
    expect(scrubTokens('_x://user:pw123456@host')).toBe(`_x://user:${REDACTED}@host`);
    expect(scrubTokens('postgres://berth:s3cr3t@db:5432/x')).toBe(`postgres://berth:${REDACTED}@db:5432/x`);
    const cut = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC';
    expect(scrubTokens(`key: ${cut}`)).toBe(`key: ${REDACTED}`);
    const pem = '-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----';
    expect(scrubTokens(`${pem} then ${pem} kept`)).toBe(`${REDACTED} then ${REDACTED} kept`);
  });
});
