/**
 * The PostgreSQL backend and stores, in one module that stores.ts imports only when a domain is on
 * PostgreSQL: drizzle-orm and pg cost an in-memory broker ~90 MB of RSS it would never use.
 */
export { openPgEventStore } from './events/pg-store.ts';
export { PgIdempotencyStore } from './idempotency/pg-store.ts';
export { openPgMessageStore } from './messages/pg-store.ts';
export { openPgBackend } from './pg/index.ts';
export { openPgSessionStore } from './sessions/pg-store.ts';
