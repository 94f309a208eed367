import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { crdFor, jsonSchemaOf, toStructural } from './crd.ts';
import { ALL_KINDS } from './registry.ts';

describe('toStructural', () => {
  it('drops $schema and additionalProperties:false but keeps maps', () => {
    const s = toStructural(jsonSchemaOf(z.object({ a: z.string(), m: z.record(z.string(), z.string()) })));
    expect(s.$schema).toBeUndefined();
    expect(s.additionalProperties).toBeUndefined();
    expect((s.properties as Record<string, Record<string, unknown>>).m?.additionalProperties).toEqual({
      type: 'string',
    });
  });

  it('rejects unions that are not marked preserve-unknown-fields', () => {
    expect(() => toStructural(jsonSchemaOf(z.object({ u: z.union([z.string(), z.number()]) })))).toThrow(
      /union at \$\.u/,
    );
  });

  it('turns a marked union into an untyped preserve-unknown-fields node', () => {
    const u = z
      .union([z.string(), z.array(z.string())])
      .meta({ 'x-kubernetes-preserve-unknown-fields': true });
    const s = toStructural(jsonSchemaOf(z.object({ u })));
    expect((s.properties as Record<string, unknown>).u).toEqual({
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('keeps defaulted fields optional and strips the safe-integer bounds of .int()', () => {
    const s = toStructural(jsonSchemaOf(z.object({ d: z.string().default('x'), n: z.number().int() })));
    expect(s.required).toEqual(['n']);
    expect((s.properties as Record<string, Record<string, unknown>>).n).toEqual({ type: 'integer' });
  });
});

describe('crdFor', () => {
  it('generates a CRD with status subresource, short names and printer columns for every kind', () => {
    expect(ALL_KINDS.map((k) => k.kind).sort()).toEqual(
      ['Agent', 'Evaluation', 'Evaluator', 'MCPServer', 'Memory', 'Model', 'Query', 'Team', 'Tool'].sort(),
    );
    for (const def of ALL_KINDS) {
      const crd = crdFor(def) as { metadata: { name: string }; spec: Record<string, any> };
      expect(crd.metadata.name).toBe(`${def.plural}.berth.dev`);
      const version = crd.spec.versions[0];
      expect(version.subresources).toEqual({ status: {} });
      expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
      expect(version.additionalPrinterColumns.at(-1).name).toBe('Age');
      expect(version.schema.openAPIV3Schema.required).toEqual(['spec']);
    }
  });

  it('puts the model URL rule and the query phase enum into the schema', () => {
    const model = crdFor(ALL_KINDS.find((k) => k.kind === 'Model')!) as any;
    const baseUrl = model.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.baseUrl;
    expect(baseUrl['x-kubernetes-validations'][0].rule).toContain("startsWith('https://')");
    const query = crdFor(ALL_KINDS.find((k) => k.kind === 'Query')!) as any;
    const status = query.spec.versions[0].schema.openAPIV3Schema.properties.status;
    expect(status.properties.phase.enum).toEqual([
      'pending',
      'running',
      'input-required',
      'done',
      'error',
      'canceled',
    ]);
  });
});

/** Paths of every node under `node` (properties and array items) that has no description. */
function undescribed(node: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  if (!node.description) out.push(path);
  for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>))
    out.push(...undescribed(v, `${path}.${k}`));
  const items = node.items as Record<string, unknown> | undefined;
  // An array's items share the array's description in kubectl explain; only their fields need one.
  if (items?.properties)
    for (const [k, v] of Object.entries(items.properties as Record<string, Record<string, unknown>>))
      out.push(...undescribed(v, `${path}[].${k}`));
  return out;
}

describe('kubectl explain', () => {
  it('has a description for every kind and every spec and status field', () => {
    const missing = ALL_KINDS.flatMap((def) => {
      const schema = (crdFor(def) as any).spec.versions[0].schema.openAPIV3Schema;
      return [
        ...(schema.description ? [] : [def.kind]),
        ...undescribed(schema.properties.spec, `${def.kind}.spec`),
        ...undescribed(schema.properties.status, `${def.kind}.status`),
      ];
    });
    expect(missing).toEqual([]);
  });

  it('makes conditions a map list keyed by type with date-time timestamps', () => {
    for (const def of ALL_KINDS) {
      const status = (crdFor(def) as any).spec.versions[0].schema.openAPIV3Schema.properties.status;
      const conditions = status.properties.conditions;
      expect(conditions['x-kubernetes-list-type'], def.kind).toBe('map');
      expect(conditions['x-kubernetes-list-map-keys'], def.kind).toEqual(['type']);
      expect(conditions.items.properties.lastTransitionTime.format, def.kind).toBe('date-time');
    }
  });
});
