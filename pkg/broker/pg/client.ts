import type pg from 'pg';

/**
 * Checks a connection out of the pool for `fn`. A checked-out pg client has no 'error' listener
 * (pg-pool removes its idle one), and a server that goes away between two of our queries would make
 * it emit an unhandled 'error' and crash the process: one is attached for as long as we hold it.
 * The query in flight fails on its own; the connection is then destroyed instead of returned.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  const onError = (err: unknown) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    const out = await fn(client);
    client.removeListener('error', onError);
    client.release(broken ? true : undefined);
    return out;
  } catch (err) {
    client.removeListener('error', onError);
    client.release(true);
    throw err;
  }
}

/** Where a statement runs: the pool, or a client inside the caller's transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Runs `fn` in a transaction on one pooled connection (see withClient); ROLLBACK on failure. */
export function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, (client) => transactionOn(client, fn));
}

/** Runs `fn` in a transaction on `client`, which the caller holds; ROLLBACK on failure. */
export async function transactionOn<T>(
  client: pg.PoolClient,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
