import { MemoryEventStore } from './memory-store.ts';
import { eventStoreContract } from './store.contract.ts';

eventStoreContract(
  'memory',
  async () => new MemoryEventStore({ caps: { maxItems: 100, maxBytes: 1 << 20 }, ttlSeconds: 60 }),
);
