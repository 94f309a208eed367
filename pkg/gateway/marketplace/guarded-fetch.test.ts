import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { AddressRefused, refusalIn } from './fetch-failure.ts';
import { guardedLookup } from './guarded-fetch.ts';

const lookupWith = (answer: LookupAddress[]) => guardedLookup(async () => answer);
const call = (answer: LookupAddress[], options: { all?: boolean; family?: number }) =>
  new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
    lookupWith(answer)('h.test', options, (err, address, family) => resolve({ err, address, family })),
  );

describe('guardedLookup (the pinned resolution of the request-forgery guard)', () => {
  it('hands the socket exactly the addresses it checked', async () => {
    const answer = [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ];
    expect((await call(answer, { all: true })).address).toEqual(answer);
    expect(await call(answer, {})).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect((await call(answer, { family: 6 })).address).toBe('2606:2800:21f:cb07:6820:80da:af6b:8b2c');
  });

  it('refuses a name when any of its addresses is not allowed', async () => {
    for (const bad of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', '::ffff:127.0.0.1']) {
      const { err } = await call(
        [
          { address: '93.184.215.14', family: 4 },
          { address: bad, family: bad.includes(':') ? 6 : 4 },
        ],
        {
          all: true,
        },
      );
      expect(err, bad).toBeInstanceOf(AddressRefused);
      expect(err?.message).toContain(`${bad} is not allowed`);
      expect(refusalIn(new Error('wrapped', { cause: new AggregateError([err]) }))).toBe(err);
    }
  });

  it('passes resolution failures through, and an empty answer is "not found"', async () => {
    const failing = guardedLookup(async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    });
    const err = await new Promise<Error | null>((r) => failing('x.test', {}, (e) => r(e)));
    expect((err as { code?: string }).code).toBe('ENOTFOUND');
    expect(((await call([], {})).err as { code?: string }).code).toBe('ENOTFOUND');
  });
});
