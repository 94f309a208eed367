import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode, HttpError, httpError, relayedError, statusOf } from './codes.ts';

/** The rows of docs/api.md's "Error codes" table: code → the statuses its second cell names. */
function documented(): Map<string, number[]> {
  const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### Error codes'));
  const rows = new Map<string, number[]>();
  for (const line of section.slice(0, section.indexOf('\n\n', section.indexOf('| code |'))).split('\n')) {
    const cells = /^\| `([a-z_]+)` \| ([^|]+) \|/.exec(line);
    if (cells) rows.set(cells[1] as string, (cells[2] as string).match(/\d{3}/g)?.map(Number) ?? []);
  }
  return rows;
}

describe('ERROR_CODES', () => {
  it('is the table of docs/api.md: every code, with the same statuses in the same order', () => {
    const registry = Object.entries(ERROR_CODES).map(([code, s]): [string, number[]] => [
      code,
      typeof s === 'number' ? [s] : [...s],
    ]);
    expect(new Map(registry)).toEqual(documented());
  });

  it('gives a thrown code its status; another only where the code lists it', () => {
    expect(httpError('not_found', 'gone')).toMatchObject({ status: 404, code: 'not_found', message: 'gone' });
    expect(httpError('invalid', 'bad type').status).toBe(422);
    expect(httpError('invalid', 'bad type', undefined, { status: 400 }).status).toBe(400);
    expect(statusOf('kubernetes_unavailable')).toBe(503);
    const limited = httpError(
      'rate_limited',
      'slow down',
      { scope: 'key' },
      { headers: { 'retry-after': '6' } },
    );
    expect(limited).toMatchObject({
      status: 429,
      details: { scope: 'key' },
      headers: { 'retry-after': '6' },
    });
  });

  it('refuses, at type level, a code it does not know or a status the code does not have', () => {
    // @ts-expect-error: not a code of ERROR_CODES
    const unknown: ErrorCode = 'unauthenticated';
    // @ts-expect-error: not_found is a 404 only
    httpError('not_found', 'x', undefined, { status: 400 });
    // @ts-expect-error: the constructor too
    new HttpError('not_found', 'x', undefined, { status: 400 });
    // Not called: only what the compiler says of it matters.
    // @ts-expect-error: a code, not a status, comes first
    const _statusFirst = () => new HttpError(404, 'not_found', 'x');
    expect(unknown).toBe('unauthenticated');
  });

  it('passes on, through relayedError only, a status another server chose', () => {
    expect(relayedError(507, 'kubernetes_error', 'full', { why: 'disk' })).toMatchObject({
      status: 507,
      code: 'kubernetes_error',
      details: { why: 'disk' },
    });
    expect(new HttpError('invalid', 'bad', undefined, { status: 400 }).status).toBe(400);
  });
});
