import { z } from 'zod';
import { GROUP, VERSION } from './group.ts';
import type { KindDef } from './kind-def.ts';

type Json = Record<string, unknown>;

const SAFE_INT = Number.MAX_SAFE_INTEGER;
const K8S_FORMATS = new Set(['date-time', 'date', 'int32', 'int64', 'byte', 'uuid']);

/**
 * Turns the JSON Schema that zod emits into a Kubernetes structural schema: no `$schema`,
 * no `additionalProperties: false` (the API server prunes unknown fields itself), no unions
 * (a union must be marked x-kubernetes-preserve-unknown-fields and validated by CEL), and no
 * formats the API server does not know.
 */
export function toStructural(node: unknown, path = '$'): Json {
  if (!node || typeof node !== 'object') throw new Error(`crd: schema at ${path} is not an object`);
  const src = node as Json;
  if (src['x-kubernetes-preserve-unknown-fields'] === true) return preserveUnknown(src);
  if (src.anyOf || src.oneOf || src.allOf) {
    throw new Error(`crd: union at ${path} must be marked x-kubernetes-preserve-unknown-fields`);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (key === '$schema' || key === 'id' || key === '$id') continue;
    if (key === 'additionalProperties') {
      if (typeof value === 'object') out[key] = toStructural(value, `${path}.*`);
      continue;
    }
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([p, s]) => [p, toStructural(s, `${path}.${p}`)]),
      );
      continue;
    }
    if (key === 'items') {
      out[key] = toStructural(value, `${path}[]`);
      continue;
    }
    if (key === 'format' && !K8S_FORMATS.has(String(value))) continue;
    if ((key === 'minimum' && value === -SAFE_INT) || (key === 'maximum' && value === SAFE_INT)) continue;
    out[key] = value;
  }
  if (out.type === 'object' && Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}

function preserveUnknown(src: Json): Json {
  const out: Json = { 'x-kubernetes-preserve-unknown-fields': true };
  if (src.description) out.description = src.description;
  if (src.type === 'object') out.type = 'object';
  if (src['x-kubernetes-validations']) {
    // The API server rejects CEL rules on untyped nodes: validate such a field from its parent.
    if (!out.type)
      throw new Error('crd: x-kubernetes-validations on an untyped field; put the rule on its parent');
    out['x-kubernetes-validations'] = src['x-kubernetes-validations'];
  }
  return out;
}

/** JSON Schema of a zod schema as the API server sees it (input side: defaults are optional). */
export function jsonSchemaOf(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0', unrepresentable: 'throw' }) as Json;
}

export function crdFor(def: KindDef): Json {
  const spec = toStructural(jsonSchemaOf(def.spec), `${def.kind}.spec`);
  const status = toStructural(jsonSchemaOf(def.status), `${def.kind}.status`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: ['berth'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              ...(def.description ? { description: def.description } : {}),
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { description: `Desired state of the ${def.kind}`, ...spec },
                status: {
                  description: `Observed state of the ${def.kind}, written by the controller`,
                  ...status,
                },
              },
            },
          },
        },
      ],
    },
  };
}
