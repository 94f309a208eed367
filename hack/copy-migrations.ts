import { cpSync } from 'node:fs';

/** tsc emits no .sql: the broker's migrations are copied beside the compiled migrate module. */
cpSync('pkg/broker/pg/migrations', 'dist/pkg/broker/pg/migrations', { recursive: true });
