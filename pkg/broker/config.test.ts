import { describe, expect, it } from 'vitest';
import { ConfigError, loadBrokerConfig } from './config.ts';

const pg = { MESSAGE_BACKEND: 'postgres', DATABASE_URL: 'postgres://u:p@db:5432/berth' };

describe('broker configuration', () => {
  it('refuses a sessions TTL shorter than the message or event TTL', () => {
    expect(() =>
      loadBrokerConfig({
        SESSIONS_VISIBILITY_TTL_SECONDS: '60',
        MESSAGE_VISIBILITY_TTL_SECONDS: '120',
        EVENT_VISIBILITY_TTL_SECONDS: '30',
      }),
    ).toThrow(/SESSIONS_VISIBILITY_TTL_SECONDS: must be at least the message and event TTLs \(120\)/);
    expect(() =>
      loadBrokerConfig({
        SESSIONS_VISIBILITY_TTL_SECONDS: '100',
        MESSAGE_VISIBILITY_TTL_SECONDS: '50',
        EVENT_VISIBILITY_TTL_SECONDS: '101',
      }),
    ).toThrow(ConfigError);
    const ok = loadBrokerConfig({
      SESSIONS_VISIBILITY_TTL_SECONDS: '100',
      MESSAGE_VISIBILITY_TTL_SECONDS: '100',
      EVENT_VISIBILITY_TTL_SECONDS: '10',
    });
    expect(ok.ttl).toMatchObject({ sessionsSeconds: 100, messagesSeconds: 100, eventsSeconds: 10 });
  });

  it('reads the PostgreSQL settings: pool size, migrate at start, reap interval', () => {
    const d = loadBrokerConfig(pg);
    expect(d.backends.messages).toBe('postgres');
    expect(d.database).toEqual({ poolSize: 10, migrateOnStart: false, reapIntervalMs: 30_000 });
    const c = loadBrokerConfig({
      ...pg,
      DATABASE_POOL_SIZE: '25',
      MIGRATE_ON_START: 'true',
      REAP_INTERVAL_SECONDS: '5',
    });
    expect(c.database).toEqual({ poolSize: 25, migrateOnStart: true, reapIntervalMs: 5000 });
    expect(() => loadBrokerConfig({ ...pg, MIGRATE_ON_START: 'yes' })).toThrow(
      /MIGRATE_ON_START: must be true or false/,
    );
    expect(() => loadBrokerConfig({ ...pg, DATABASE_POOL_SIZE: '0' })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => loadBrokerConfig({ MESSAGE_BACKEND: 'postgres' })).toThrow(/DATABASE_URL: is required/);
    expect(() => loadBrokerConfig({ ...pg, DATABASE_URL: 'mysql://db/x' })).toThrow(/DATABASE_URL/);
  });
});
