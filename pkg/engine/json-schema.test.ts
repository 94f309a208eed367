import { describe, expect, it } from 'vitest';
import {
  compileSchema,
  describeIssues,
  MAX_PATTERN_INPUT,
  nestedQuantifier,
  schemaIssues,
} from './json-schema.ts';

describe('JSON Schema checks', () => {
  it('tells nested quantifiers (catastrophic backtracking) from plain ones', () => {
    for (const p of ['(a+)+', '(\\w*)*x', '((ab)*)+', '(a|aa){2,}', '(?:x+)*', '(cat|dog)+'])
      expect(nestedQuantifier(p), p).toBe(true);
    for (const p of [
      '^[a-z]+$',
      '(ab)+',
      '(a+)?',
      '(a+){2}',
      '(cat|dog){1,3}',
      '[(+)*]+',
      '\\(a+\\)+',
      '^\\d{4}-\\d{2}$',
    ])
      expect(nestedQuantifier(p), p).toBe(false);
  });

  it('refuses such a pattern when the schema is compiled, and never matches an over-long string', () => {
    expect(() => compileSchema({ type: 'string', pattern: '^(a+)+$' })).toThrow(/nests quantifiers/);
    expect(() => compileSchema({ patternProperties: { '(x*)*': { type: 'string' } } })).toThrow(
      /nests quantifiers/,
    );
    // Two patterns of one schema are two regular expressions (Ajv keys them by their text).
    const two = { type: 'object', properties: { a: { pattern: '^a$' }, b: { pattern: '^b$' } } };
    expect(schemaIssues(two, { a: 'a', b: 'b' })).toEqual([]);
    expect(schemaIssues(two, { a: 'b', b: 'a' })).toHaveLength(2);
    const schema = { type: 'string', pattern: '^a+$' };
    expect(schemaIssues(schema, 'aaa')).toEqual([]);
    expect(schemaIssues(schema, 'a'.repeat(MAX_PATTERN_INPUT + 1))).toHaveLength(1);
  });

  it('fetches no remote $ref and names violations by path', () => {
    expect(() => compileSchema({ $ref: 'https://example.com/s.json' })).toThrow(/can't resolve reference/);
    expect(() => compileSchema([1])).toThrow(/must be an object/);
    const issues = schemaIssues(
      { type: 'object', properties: { n: { type: 'integer' } }, required: ['n', 'm'] },
      { n: 'x' },
    );
    expect(describeIssues(issues)).toBe("/: must have required property 'm'; /n: must be integer");
  });

  it('compiles two schemas with the same $id side by side', () => {
    expect(schemaIssues({ $id: 'x', type: 'string' }, 's')).toEqual([]);
    expect(schemaIssues({ $id: 'x', type: 'number' }, 1)).toEqual([]);
  });
});
