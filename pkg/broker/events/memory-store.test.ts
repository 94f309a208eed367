import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { Journal } from '../core/journal.ts';
import { MemoryEventStore } from './memory-store.ts';
import { eventStoreContract } from './store.contract.ts';

eventStoreContract(
  'memory',
  async () => new MemoryEventStore({ caps: { maxItems: 100, maxBytes: 1 << 20 }, ttlSeconds: 60 }),
);

describe('a namespace-scoped purge in the journal', () => {
  it('is replayed at load: the other namespace keeps its events after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'events-journal-'));
    try {
      const path = join(dir, 'events.jsonl');
      const open = () =>
        new MemoryEventStore({
          caps: { maxItems: 100, maxBytes: 1 << 20 },
          ttlSeconds: 60,
          journal: new Journal({ path, logger: createLogger({ level: 'silent' }), flushMs: 60_000 }),
        });
      const first = open();
      await first.load();
      for (const ns of ['team-a', 'team-b', 'team-a'])
        await first.append({
          eventType: 'Normal',
          reason: 'QueryExecutionStart',
          message: '',
          data: { queryId: 'support-1', queryNamespace: ns },
        });
      expect(await first.delete('support-1', 'team-a')).toBe(2);
      await first.close();
      const again = open();
      await again.load();
      const left = await again.page({ queryId: 'support-1' }, 0, 10);
      expect(left.items.map((e) => [e.seq, e.data.queryNamespace])).toEqual([[2, 'team-b']]);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
