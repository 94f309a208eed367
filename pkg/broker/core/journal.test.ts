import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { Journal } from './journal.ts';

const dir = mkdtempSync(join(tmpdir(), 'journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logger = createLogger({ level: 'silent' });

describe('Journal', () => {
  it('appends in batches, cuts a torn last line, and compacts atomically', async () => {
    const path = join(dir, 'j.jsonl');
    const j = new Journal({ path, logger, flushMs: 1000 });
    j.append('{"a":1}');
    j.append('{"a":2}');
    j.flush();
    j.close();
    appendFileSync(path, '{"a":3, "tor');

    const again = new Journal({ path, logger, flushMs: 1000 });
    const seen: unknown[] = [];
    await again.load((v) => seen.push(v));
    expect(seen).toEqual([{ a: 1 }, { a: 2 }]);
    again.append('{"a":4}');
    again.flush();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"a":2}\n{"a":4}\n');
    again.compact(['{"snap":true}']);
    again.append('{"a":5}');
    again.close();
    expect(readFileSync(path, 'utf8')).toBe('{"snap":true}\n{"a":5}\n');
  });
});
