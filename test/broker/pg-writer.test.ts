import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { APPEND_BATCH } from '../../pkg/broker/messages/pg-batch-sql.ts';
import { Writer } from '../../pkg/broker/pg/index.ts';
import { eventually } from './harness.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());

/** A PostgreSQL array literal of `values` (each element quoted). */
const arrayLiteral = (values: unknown[]) => `'{${values.map((v) => JSON.stringify(String(v))).join(',')}}'`;

describe('the writer connection (generic plans)', () => {
  it('makes its plans again from the current table size: one made on an empty table does not scan it for ever', async () => {
    const url = await dbs.fresh();
    const writer = new Writer({ connectionString: url }, () => {}, 2000);
    const at = new Date().toISOString();
    const args = [['c'], [at], ['c'], ['q'], [at], [3600], ['"role":"user","content":"x"}']];
    await writer.run((c) => c.query({ name: 'berth_append_batch', text: APPEND_BATCH, values: args }));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`INSERT INTO berth_conversations (id, seq, created_at, last_activity)
      SELECT 'x' || i, nextval('berth_conversations_seq'), now(), now() FROM generate_series(1, 20000) i`);
    await admin.end();
    // The cached generic plan of the statement, as the next batch would run it.
    const plan = () =>
      writer.run(async (c) => {
        const r = await c.query(`EXPLAIN EXECUTE berth_append_batch(${args.map(arrayLiteral).join(',')})`);
        return r.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    // Made while the table was empty (and never analyzed since): a full scan of every conversation.
    expect(await plan()).toMatch(/Seq Scan on berth_conversations/);
    await eventually(async () => !/Seq Scan on berth_conversations/.test(await plan()), 10_000);
    expect(await plan()).toMatch(/Index (Only )?Scan using berth_conversations_pkey/);
    await writer.close();
  });
});
