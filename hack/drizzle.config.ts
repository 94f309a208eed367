import { defineConfig } from 'drizzle-kit';

/**
 * `npm run db:generate` diffs the schema files against the last snapshot and writes the next SQL
 * migration into pkg/broker/pg/migrations (checked in). Migrations are applied by `berth migrate`.
 */
export default defineConfig({
  dialect: 'postgresql',
  schema: './pkg/broker/pg/schema/*.ts',
  out: './pkg/broker/pg/migrations',
});
