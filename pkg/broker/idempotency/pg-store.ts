import type pg from 'pg';
import { guarded, LOCKS, type PgBackend } from '../pg/index.ts';
import type { Begun, IdempotencyOptions, IdempotencyStore, StoredResponse } from './types.ts';
import { idempotencyOptions } from './types.ts';

// Claims the key: a new row, or one whose answer expired or whose claim was left unfinished.
// Concurrent claims of one key serialize on its row: exactly one gets a row back.
const CLAIM = `
  INSERT INTO berth_idempotency_keys AS k (key, claimed_at, expires_at)
  VALUES ($1, now(), now() + make_interval(secs => $2::float8))
  ON CONFLICT (key) DO UPDATE
    SET claimed_at = now(), status = NULL, body = NULL, content_type = NULL, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= now() OR (k.status IS NULL AND k.claimed_at <= now() - make_interval(secs => $3::float8))
  RETURNING key`;

/** Keys in PostgreSQL (table berth_idempotency_keys): a repeat reaching another replica is known there too. */
export class PgIdempotencyStore implements IdempotencyStore {
  readonly #pool: pg.Pool;
  readonly #o: IdempotencyOptions;

  constructor(backend: PgBackend, opts: Partial<IdempotencyOptions> = {}) {
    this.#pool = backend.database.pool;
    this.#o = idempotencyOptions(opts);
    backend.reaper.add({
      name: 'idempotency-keys',
      lockId: LOCKS.reapIdempotencyKeys,
      batch: async (client, limit) =>
        (
          await client.query(
            `DELETE FROM berth_idempotency_keys WHERE key IN (
               SELECT key FROM berth_idempotency_keys WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
            [limit],
          )
        ).rowCount ?? 0,
    });
  }

  begin(key: string): Promise<Begun> {
    return guarded('postgres', async () => {
      const claimed = await this.#pool.query(CLAIM, [key, this.#o.ttlMs / 1000, this.#o.claimMs / 1000]);
      if (claimed.rowCount) return { state: 'new' } as const;
      const r = await this.#pool.query<{
        status: number | null;
        body: string | null;
        content_type: string | null;
      }>('SELECT status, body, content_type FROM berth_idempotency_keys WHERE key = $1', [key]);
      const row = r.rows[0];
      // Reaped between the two statements: claim it again.
      if (!row) return this.begin(key);
      if (row.status === null) return { state: 'busy' } as const;
      const response: StoredResponse = {
        status: row.status,
        body: row.body ?? '',
        contentType: row.content_type ?? 'application/json',
      };
      return { state: 'done', response } as const;
    });
  }

  finish(key: string, response: StoredResponse): Promise<void> {
    return guarded('postgres', async () => {
      await this.#pool.query(
        `UPDATE berth_idempotency_keys SET status = $2, body = $3, content_type = $4,
           expires_at = now() + make_interval(secs => $5::float8) WHERE key = $1`,
        [key, response.status, response.body, response.contentType, this.#o.ttlMs / 1000],
      );
    });
  }

  abandon(key: string): Promise<void> {
    return guarded('postgres', async () => {
      await this.#pool.query('DELETE FROM berth_idempotency_keys WHERE key = $1 AND status IS NULL', [key]);
    });
  }
}
