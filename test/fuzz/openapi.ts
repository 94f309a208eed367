/**
 * Requests generated from a service's own `/openapi.json`: every documented operation, every path
 * and query parameter, every JSON body, so a route added tomorrow is fuzzed without touching the
 * tests. Values follow the documented schema most of the time (to get past validation and reach
 * the API server, the stores, the broker) and are replaced by hostile ones the rest of the time.
 */
import fc from 'fast-check';
import {
  anyJson,
  contentType,
  deepValue,
  enc,
  hostileNumber,
  hostileString,
  malformedText,
  segment,
  toJson,
} from './values.ts';

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema }>;
  body?: Schema;
}

export interface FuzzRequest {
  method: string;
  /** Path and query, ready to append to the service URL. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The documented operation it was generated from (for the report). */
  op: string;
}

export interface Vocabulary {
  /** Values that name real things (the test namespace, objects the run creates), per parameter name. */
  known: Record<string, string[]>;
  /** Names the run's bodies give to objects, so later requests find them. */
  names: string[];
}

/**
 * Fields whose documented schema is looser than what the API server accepts (a plain string that
 * must be a duration, a timestamp, Kubernetes object metadata): their valid values come from here.
 */
function shapeOf(key: string, vocab: Vocabulary): fc.Arbitrary<unknown> | undefined {
  switch (key) {
    case 'metadata':
      // A name in the body must match the path's, and a resourceVersion makes a write conditional:
      // both are present now and then, most writes go without.
      return fc
        .tuple(
          fc.record(
            { labels: fc.constant({ app: 'fuzz' }), annotations: fc.constant({ 'fuzz/run': 'yes' }) },
            { requiredKeys: [] },
          ),
          fc.option(fc.constantFrom(...vocab.names), { freq: 5 }),
          // Values the API server may not parse: it must never answer them with a 5xx.
          fc.option(fc.constantFrom('1', 'abc', '-1', '1.5', '99999999999999999999', ''), { freq: 4 }),
        )
        .map(([m, name, rv]) => ({
          ...m,
          ...(name ? { name } : {}),
          ...(rv !== null ? { resourceVersion: rv } : {}),
        }));
    case 'ttl':
    case 'timeout':
      return fc.constantFrom('30s', '5m', '720h', '1h30m');
    case 'expires_at':
      return fc.constantFrom('2035-01-01T00:00:00Z', '2000-01-01T00:00:00Z', '2035-01-01');
    case 'type':
      return fc.constantFrom('Opaque', 'direct');
    default:
      return undefined;
  }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Routes every service serves beside its documented API (the document itself, its page). */
const UNDOCUMENTED = ['/openapi.json', '/docs', '/api-docs', '/health'];

export function operations(doc: Schema): Operation[] {
  const ops: Operation[] = UNDOCUMENTED.filter((p) => !doc.paths?.[p]).map((path) => ({
    method: 'GET',
    path,
    pathParams: [],
    query: [],
  }));
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])] as Schema[];
      const bodySchema = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        ...(bodySchema ? { body: resolve(doc, bodySchema) } : op.requestBody ? { body: {} } : {}),
      });
    }
  }
  return ops;
}

function resolve(doc: Schema, s: Schema): Schema {
  if (typeof s?.$ref === 'string') {
    const name = s.$ref.split('/').pop() as string;
    return resolve(doc, doc.components?.schemas?.[name] ?? {});
  }
  return s;
}

/**
 * An arbitrary value for a JSON Schema node. `hostile` is the weight (in tenths) of replacing any
 * node by a hostile value: 0 gives documents that pass validation and reach what lies behind it.
 */
export function valueFor(
  s: Schema,
  vocab: Vocabulary,
  key = '',
  depth = 0,
  hostile = 1,
): fc.Arbitrary<unknown> {
  const conforming = conformingFor(s, vocab, key, depth, hostile);
  if (!hostile) return conforming;
  return fc.oneof({ weight: 10 - hostile, arbitrary: conforming }, { weight: hostile, arbitrary: anyJson });
}

function conformingFor(
  s: Schema,
  vocab: Vocabulary,
  key: string,
  depth: number,
  hostile: number,
): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant({});
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const shaped = shapeOf(key, vocab);
  if (shaped) return shaped;
  if ('const' in s) return fc.constant(s.const);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives?.length)
    return fc.oneof(...alternatives.map((a) => conformingFor(a, vocab, key, depth, hostile)));
  if (Array.isArray(s.allOf)) return conformingFor(Object.assign({}, ...s.allOf), vocab, key, depth, hostile);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const max = (n: number) => Math.min(s.maximum ?? n, n);
  switch (type) {
    case 'string':
      return stringFor(s, vocab, key);
    case 'integer':
      return hostile
        ? fc.oneof(fc.integer({ min: s.minimum ?? 0, max: max(10_000) }), hostileNumber)
        : fc.integer({ min: Math.max(s.minimum ?? 0, (s.exclusiveMinimum ?? -1) + 1), max: max(10_000) });
    case 'number':
      return hostile
        ? fc.oneof(fc.double({ min: s.minimum ?? 0, max: max(1e6), noNaN: true }), hostileNumber)
        : fc.double({ min: s.minimum ?? 0, max: max(1e6), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueFor(s.items ?? {}, vocab, key, depth + 1, hostile), { maxLength: 3 });
    case 'object':
      return objectFor(s, vocab, depth, hostile);
    default:
      return s.properties
        ? objectFor(s, vocab, depth, hostile)
        : hostile
          ? anyJson
          : fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFor(s: Schema, vocab: Vocabulary, key: string): fc.Arbitrary<string> {
  const known = vocab.known[key] ?? (/name$/i.test(key) ? vocab.names : undefined);
  const options: fc.Arbitrary<string>[] = [];
  if (known?.length) options.push(fc.constantFrom(...known));
  if (typeof s.pattern === 'string') {
    try {
      options.push(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 300)));
    } catch {
      // A pattern JavaScript cannot compile is simply not used as a generator.
    }
  }
  if (s.format === 'date-time') options.push(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
  if (s.format === 'uri' || /url$/i.test(key)) options.push(urlValue);
  options.push(fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 24) }));
  return fc.oneof(...options);
}

/** URLs a request-forgery probe would try, plus ones that are not URLs; none needs the network. */
const urlValue: fc.Arbitrary<string> = fc.constantFrom(
  'https://127.0.0.1/manifest.json',
  'https://localhost:1/x',
  'https://169.254.169.254/latest/meta-data/',
  'https://[::1]/x',
  'https://10.0.0.1/x',
  'https://catalogue.invalid/m.json',
  'http://catalogue.invalid/m.json',
  'file:///etc/passwd',
  'ftp://x/y',
  'not a url',
  '//no-scheme',
  'https://',
);

function objectFor(s: Schema, vocab: Vocabulary, depth: number, hostile: number): fc.Arbitrary<unknown> {
  const props = Object.entries<Schema>(s.properties ?? {});
  const required = new Set<string>(s.required ?? []);
  const record = fc.record(
    Object.fromEntries(props.map(([k, v]) => [k, valueFor(v, vocab, k, depth + 1, hostile)])),
    { requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)) },
  );
  if (!hostile) return record;
  const extra = s.additionalProperties
    ? fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 })
    : fc.constant({});
  // Now and then a required field goes missing.
  const drop = fc.option(fc.constantFrom(...(required.size ? [...required] : [''])), { freq: 10 });
  return fc.tuple(record, extra, drop).map(([r, e, d]) => {
    const out: Record<string, unknown> = { ...e, ...r };
    if (d) delete out[d];
    return out;
  });
}

/** A value for one parameter: documented, hostile, repeated or absent. */
function paramValue(name: string, s: Schema, vocab: Vocabulary): fc.Arbitrary<string[] | undefined> {
  const conforming = stringFor(
    { ...s, ...(s.type === 'integer' ? { pattern: '^\\d{1,4}$' } : {}) },
    vocab,
    name,
  ) as fc.Arbitrary<string>;
  const one = fc.oneof(
    { weight: 5, arbitrary: s.enum ? fc.constantFrom(...(s.enum as string[])) : conforming },
    { weight: 3, arbitrary: hostileString },
    { weight: 1, arbitrary: hostileNumber.map(String) },
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 5, arbitrary: one.map((v) => [v]) },
    { weight: 1, arbitrary: fc.array(one, { minLength: 2, maxLength: 3 }) },
  );
}

function bodyFor(op: Operation, vocab: Vocabulary): fc.Arbitrary<string | undefined> {
  // Half the documents are valid (they reach the API server, the stores), half carry mutations.
  const documented = op.body
    ? fc.oneof(valueFor(op.body, vocab, '', 0, 0), valueFor(op.body, vocab, '', 0, 1))
    : anyJson;
  const json = fc.oneof(
    { weight: 8, arbitrary: documented },
    { weight: 1, arbitrary: anyJson },
    { weight: 1, arbitrary: fc.tuple(documented, deepValue).map(([d, deep]) => plant(d, deep)) },
  );
  const text = fc.oneof({ weight: 9, arbitrary: json.map(toJson) }, { weight: 1, arbitrary: malformedText });
  if (op.body) return text;
  // Routes that take no body still get one now and then.
  return fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: text });
}

/** Puts a deep value inside a generated body (at its root, or under one of its keys). */
function plant(into: unknown, deep: unknown): unknown {
  if (!into || typeof into !== 'object' || Array.isArray(into)) return deep;
  const keys = Object.keys(into);
  const key = keys.length ? (keys[keys.length - 1] as string) : 'x';
  const inner = (into as Record<string, unknown>)[key];
  if (inner && typeof inner === 'object' && !Array.isArray(inner))
    return { ...into, [key]: { ...inner, deep } };
  return { ...into, [key]: deep };
}

/** One request for `op`, or (now and then) the same path with another method. */
export function requestFor(op: Operation, vocab: Vocabulary): fc.Arbitrary<FuzzRequest> {
  // Mostly names that exist (so requests get past routing and reach what lies behind it).
  // Deletes take only the last of the run's names: the first outlives them, for the other methods.
  const names = op.method === 'DELETE' ? vocab.names.slice(-1) : vocab.names;
  const params = op.pathParams.map((p) => {
    const known = vocab.known[p] ?? (/name$/i.test(p) ? names : []);
    return fc.oneof(
      ...(known.length ? [{ weight: 6, arbitrary: fc.constantFrom(...known).map(enc) }] : []),
      { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,8}$/) },
      { weight: 2, arbitrary: segment(hostileString) },
    );
  });
  const query = fc.tuple(...op.query.map((q) => paramValue(q.name, q.schema, vocab)));
  const extraQuery = fc.option(fc.tuple(hostileString, hostileString), { freq: 8 });
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(op.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
  );
  const headers = fc.record(
    {
      'content-type': contentType,
      accept: fc.constantFrom('application/json', 'application/yaml', 'text/event-stream', '*/*'),
      'last-event-id': hostileString,
      'if-none-match': hostileString,
    },
    { requiredKeys: [] },
  );
  return fc
    .record({
      method,
      params: fc.tuple(...params),
      query,
      extraQuery,
      headers,
      body: bodyFor(op, vocab),
    })
    .map(({ method, params, query, extraQuery, headers, body }) => {
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}/g, () => params[i++] as string);
      const qs: string[] = [];
      op.query.forEach((q, j) => {
        for (const v of query[j] ?? []) qs.push(`${enc(q.name)}=${enc(v)}`);
      });
      if (extraQuery) qs.push(`${enc(extraQuery[0])}=${enc(extraQuery[1])}`);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers))
        if (v !== undefined) h[k] = v.replace(/[^\x20-\x7e]/g, '');
      if (body === undefined) delete h['content-type'];
      return {
        method,
        url: qs.length ? `${path}?${qs.join('&')}` : path,
        headers: h,
        ...(body === undefined || method === 'GET' || method === 'OPTIONS' ? {} : { body }),
        op: `${op.method} ${op.path}`,
      };
    });
}

/** Requests spread over every operation of the document. */
export function requests(ops: Operation[], vocab: Vocabulary): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...ops.map((op) => requestFor(op, vocab)));
}
