import { describe, expect, it } from 'vitest';
import { sampleOf } from './demo-json.ts';
import { schemaIssues } from './json-schema.ts';

describe('the demo model’s structured answers', () => {
  it('satisfy the schemas an outputSchema usually is', () => {
    const schemas = [
      {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 6 },
          temp: { type: 'number', minimum: -40 },
          count: { type: 'integer', exclusiveMinimum: 3 },
          tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
          kind: { enum: ['a', 'b'] },
          when: { type: 'string', format: 'date-time' },
          nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          either: { anyOf: [{ type: 'null' }, { type: 'string' }] },
        },
        required: ['city', 'temp', 'count', 'tags', 'kind', 'when', 'nested'],
        additionalProperties: false,
      },
      { type: ['string', 'null'], maxLength: 2 },
      { type: 'array', items: { type: 'integer', maximum: 0 } },
    ];
    for (const s of schemas) expect(schemaIssues(s, sampleOf(s)), JSON.stringify(s)).toEqual([]);
  });

  it('stops at a depth on self-referring shapes', () => {
    const deep: Record<string, unknown> = { type: 'object', properties: {} };
    let at = deep;
    for (let i = 0; i < 20; i++) {
      const next = { type: 'object', properties: {} };
      (at.properties as Record<string, unknown>).x = next;
      at = next;
    }
    expect(JSON.stringify(sampleOf(deep))).toContain('null');
  });
});
