import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { Journal } from '../core/journal.ts';
import { MemoryMessageStore } from './memory-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'messages-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logger = createLogger({ level: 'silent' });
const T0 = Date.UTC(2025, 0, 1);

// What the store wrote before it was rebuilt on IndexedLog, for `writeHistory`: journals already on
// disk hold exactly these shapes, so the store must keep writing and reading them.
const HISTORY = [
  '{"$op":"conv","id":"a","seq":1,"at":"2025-01-01T00:00:00.000Z"}',
  '{"x":1735693200000,"r":{"sequence":1,"timestamp":"2025-01-01T00:00:00.000Z","conversation_id":"a","query_id":"q1","message":{"role":"user","content":"one"}}}',
  '{"x":1735693200000,"r":{"sequence":2,"timestamp":"2025-01-01T00:00:00.000Z","conversation_id":"a","query_id":"q1","message":{"role":"user","content":"two"}}}',
  '{"$op":"conv","id":"b","seq":2,"at":"2025-01-01T00:00:01.000Z"}',
  '{"x":1735689661000,"r":{"sequence":3,"timestamp":"2025-01-01T00:00:01.000Z","conversation_id":"b","query_id":"q2","message":{"role":"user","content":"three"}}}',
  '{"$op":"conv","id":"c","seq":3,"at":"2025-01-01T00:00:01.000Z"}',
  '{"$op":"del","c":"a","q":"q1"}',
  '{"x":1735693201000,"r":{"sequence":4,"timestamp":"2025-01-01T00:00:01.000Z","conversation_id":"a","query_id":"q3","message":{"role":"user","content":"four"}}}',
  '{"$op":"delConv","id":"b"}',
  '{"$op":"del"}',
  '{"x":1735693202000,"r":{"sequence":5,"timestamp":"2025-01-01T00:00:02.000Z","conversation_id":"a","query_id":"q4","message":{"role":"user","content":"five"}}}',
  '{"$seq":5}',
];

let files = 0;
function open(lines?: string[], clock = { now: T0 }) {
  const path = join(dir, `messages-${files++}.jsonl`);
  if (lines) writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  const journal = new Journal({ path, logger, flushMs: 60_000 });
  const store = new MemoryMessageStore({
    caps: { maxItems: 100, maxBytes: 1 << 20, conversations: 10 },
    defaultTtlSeconds: 3600,
    journal,
    now: () => clock.now,
  });
  return { path, journal, store };
}

const msg = (content: string) => ({ role: 'user', content });

async function writeHistory(s: MemoryMessageStore, clock: { now: number }) {
  await s.append({ conversation_id: 'a', query_id: 'q1', messages: [msg('one'), msg('two')] });
  clock.now += 1000;
  await s.append({ conversation_id: 'b', query_id: 'q2', messages: [msg('three')], ttl_seconds: 60 });
  await s.createConversation('c');
  await s.deleteMessages({ conversationId: 'a', queryId: 'q1' });
  await s.append({ conversation_id: 'a', query_id: 'q3', messages: [msg('four')] });
  await s.deleteConversation('b');
  await s.deleteMessages({});
  clock.now += 1000;
  await s.append({ conversation_id: 'a', query_id: 'q4', messages: [msg('five')] });
  await s.close();
}

describe('MemoryMessageStore journal', () => {
  it('writes the line shapes of journals already on disk', async () => {
    const clock = { now: T0 };
    const { path, store } = open(undefined, clock);
    await writeHistory(store, clock);
    expect(readFileSync(path, 'utf8')).toBe(HISTORY.map((l) => `${l}\n`).join(''));
  });

  it('reloads messages, conversations and both sequences from such a journal', async () => {
    const { store } = open(HISTORY, { now: T0 + 5000 });
    await store.load();
    expect(store.head()).toBe(5);
    expect(store.conversationHead()).toBe(3);
    expect((await store.conversations(0, 10)).items).toEqual([
      {
        conversation_id: 'a',
        sequence: 1,
        created_at: '2025-01-01T00:00:00.000Z',
        last_activity: '2025-01-01T00:00:02.000Z',
        message_count: 1,
        query_count: 1,
      },
      expect.objectContaining({ conversation_id: 'c', sequence: 3, message_count: 0 }),
    ]);
    expect((await store.page({}, 0, 10)).items.map((e) => e.seq)).toEqual([5]);
    const [next] = await store.append({ conversation_id: 'd', query_id: 'q', messages: [msg('six')] });
    expect(next?.seq).toBe(6);
    expect((await store.conversation('d'))?.sequence).toBe(4);
    await store.close();
  });

  it('keeps both sequences through a compaction that dropped their latest holders', async () => {
    const { path, journal, store } = open();
    // Any size over the threshold: every sweep compacts.
    Object.defineProperty(journal, 'size', { value: Number.MAX_SAFE_INTEGER });
    await store.createConversation('a');
    await store.append({ conversation_id: 'b', query_id: 'q', messages: [msg('x')] });
    await store.deleteConversation('b');
    store.sweep();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toEqual([
      '{"$seq":1}',
      '{"$convSeq":2}',
      '{"$op":"conv","id":"a","seq":1,"at":"2025-01-01T00:00:00.000Z"}',
    ]);
    await store.close();

    const again = open(readFileSync(path, 'utf8').trim().split('\n')).store;
    await again.load();
    expect([again.head(), again.conversationHead()]).toEqual([1, 2]);
    expect((await again.createConversation('c')).conversation.sequence).toBe(3);
    await again.close();
  });
});
