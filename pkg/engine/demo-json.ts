/**
 * The demo model's structured answers: a value that satisfies a JSON Schema, built from the schema
 * alone (defaults, consts and enums first, then one value per type), so an Agent with an
 * outputSchema answers valid JSON offline. Deterministic; deep or self-referring schemas stop at a
 * depth and answer null there.
 */
type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

const isSchema = (v: unknown): v is Schema => !!v && typeof v === 'object' && !Array.isArray(v);

function typeOf(s: Schema): string | undefined {
  const t = s.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (typeof t === 'string') return t;
  if (isSchema(s.properties)) return 'object';
  if (s.items !== undefined) return 'array';
  return undefined;
}

function number(s: Schema, integer: boolean): number {
  const min =
    typeof s.minimum === 'number'
      ? s.minimum
      : typeof s.exclusiveMinimum === 'number'
        ? s.exclusiveMinimum + 1
        : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : undefined;
  let n = min ?? (max !== undefined ? Math.min(max, 1) : 1);
  if (integer) n = Math.ceil(n);
  return n;
}

function string(s: Schema): string {
  if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (s.format === 'date') return '2026-01-01';
  if (s.format === 'email') return 'demo@example.com';
  if (s.format === 'uri') return 'https://example.com/';
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
  return 'demo'.padEnd(min, 'o').slice(0, Math.max(max, 0));
}

/** A value `schema` accepts (for the schemas an outputSchema usually is). */
export function sampleOf(schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH) return null;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list) && list.length) {
      if (key !== 'allOf') return sampleOf(list[0], depth + 1);
      return Object.assign(
        {},
        ...list.map((s) => sampleOf({ ...schema, allOf: undefined, ...(s as Schema) }, depth + 1)),
      );
    }
  }
  switch (typeOf(schema)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = isSchema(schema.properties) ? schema.properties : {};
      for (const [k, v] of Object.entries(props)) out[k] = sampleOf(v, depth + 1);
      return out;
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? Math.max(schema.minItems, 1) : 1;
      return Array.from({ length: Math.min(n, 10) }, () => sampleOf(schema.items, depth + 1));
    }
    case 'string':
      return string(schema);
    case 'integer':
      return number(schema, true);
    case 'number':
      return number(schema, false);
    case 'boolean':
      return true;
    default:
      return null;
  }
}
