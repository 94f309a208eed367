import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { databaseUrl, redisUrl } from '../support/services.ts';

describe('test services', () => {
  it('provides a PostgreSQL that answers queries', async () => {
    const client = new pg.Client({ connectionString: databaseUrl(inject('services')) });
    await client.connect();
    try {
      const r = await client.query<{ v: number }>('select 41 + 1 as v');
      expect(r.rows[0]?.v).toBe(42);
    } finally {
      await client.end();
    }
  });

  it('provides a Redis that answers commands', async () => {
    const redis = new Redis(redisUrl(inject('services')), { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('fails with a message naming the variable when a service is missing', () => {
    expect(() => databaseUrl({ databaseError: 'DATABASE_URL (x) does not answer' })).toThrow(/DATABASE_URL/);
    expect(() => redisUrl({ redisError: 'REDIS_URL (y) does not answer' })).toThrow(/REDIS_URL/);
  });
});
