import { describe, expect, it } from 'vitest';
import { entryBytes } from './capped-log.ts';

describe('entryBytes', () => {
  it('counts one byte per char for ASCII and Latin-1 text, two past U+00FF, plus the overhead', () => {
    const base = entryBytes('');
    expect(entryBytes('{"a":"plain ascii"}') - base).toBe(19);
    expect(entryBytes('{"a":"café"}') - base).toBe(12); // é is Latin-1: V8 keeps it one byte
    expect(entryBytes('{"a":"€"}') - base).toBe(18);
    expect(entryBytes('{"a":"🙂"}') - base).toBe(20);
    expect(entryBytes('x', 64) - entryBytes('x')).toBe(64);
  });
});
