import { describe, expect, it } from 'vitest';
import { HttpError } from '../../http/index.ts';
import { redactUrl } from './db.ts';
import { guarded, isUnavailable } from './errors.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('PostgreSQL error mapping', () => {
  it('tells an unreachable server from a bug', () => {
    expect(isUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isUnavailable(withCode('terminating connection due to administrator command', '57P01'))).toBe(
      true,
    );
    expect(isUnavailable(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isUnavailable(withCode('syntax error at or near "AS"', '42601'))).toBe(false);
    expect(isUnavailable(withCode('duplicate key value', '23505'))).toBe(false);
  });

  it('answers 400 for a value PostgreSQL cannot store (a NUL in a text), naming it', async () => {
    const bad = await guarded('postgres', () =>
      Promise.reject(withCode('unsupported Unicode escape sequence', '22P05')),
    ).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(HttpError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((bad as Error).message).toContain('cannot store: unsupported Unicode escape sequence');
  });

  it('answers 503 storage_unavailable with Retry-After, retries deadlocks, lets bugs through', async () => {
    const down = await guarded('postgres', () =>
      Promise.reject(withCode('connect ECONNREFUSED', 'ECONNREFUSED')),
    ).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(HttpError);
    expect(down).toMatchObject({ status: 503, code: 'storage_unavailable', headers: { 'retry-after': '2' } });
    expect((down as Error).message).toMatch(/^postgres is unavailable: connect ECONNREFUSED/);
    let tries = 0;
    const v = await guarded('postgres', async () => {
      if (++tries < 3) throw withCode('deadlock detected', '40P01');
      return 'ok';
    });
    expect([v, tries]).toEqual(['ok', 3]);
    await expect(
      guarded('postgres', () => Promise.reject(withCode('syntax error', '42601'))),
    ).rejects.toMatchObject({
      code: '42601',
    });
  });

  it('never shows a password of DATABASE_URL', () => {
    expect(redactUrl('postgres://berth:s3cret@db:5432/berth?sslmode=require&password=x')).toBe(
      'postgres://berth@db:5432/berth?sslmode=require&password=REDACTED',
    );
    expect(redactUrl('not a url')).toBe('<unparseable DATABASE_URL>');
  });
});
