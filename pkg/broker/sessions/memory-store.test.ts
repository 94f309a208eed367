import { MemorySessionStore } from './memory-store.ts';
import { sessionStoreContract } from './store.contract.ts';

sessionStoreContract('memory', async () => new MemorySessionStore({ maxSessions: 100, ttlSeconds: 3600 }));
