export * from './events.ts';
export * from './idempotency.ts';
export * from './messages.ts';
export * from './sequences.ts';
export * from './sessions.ts';
