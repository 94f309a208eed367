import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { objectMetaSchema } from '../../api/index.ts';
import { errorEnvelopeSchema, issuesSchema } from '../../http/index.ts';

/** `{name?, metadata?, spec}`: flat `name` or Kubernetes-style metadata; one of them names the object. */
export function createBody(spec: z.ZodType) {
  return z
    .object({
      name: z.string().min(1).max(253).optional(),
      metadata: objectMetaSchema.optional(),
      spec,
    })
    .refine((b) => !!(b.name ?? b.metadata?.name ?? b.metadata?.generateName), {
      message: 'name (or metadata.name) is required',
      path: ['name'],
    });
}

export function replaceBody(spec: z.ZodType) {
  return z.object({ metadata: objectMetaSchema.optional(), spec });
}

const patchObject = z.record(z.string(), z.unknown());
export const patchBody = z
  .object({ metadata: patchObject.optional(), spec: patchObject.optional() })
  .catchall(z.unknown())
  .describe('JSON merge patch (RFC 7386) of the object, e.g. {"spec": {"prompt": "…"}}');

export const listResponse = z.object({
  items: z.array(z.record(z.string(), z.unknown())),
  count: z.number().int(),
});
export const objectResponse = z.record(z.string(), z.unknown()).describe('The Kubernetes object');

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Path parameters checked up front, so a malformed name is a clear 400 rather than an API server error. */
export const nsParams = z.object({
  namespace: z.string().max(63).regex(DNS_LABEL, 'must be a namespace name (DNS label)'),
});
export const itemParams = nsParams.extend({
  name: z.string().max(253).regex(DNS_SUBDOMAIN, 'must be an object name (DNS subdomain)'),
});

/** The envelope with what kube-error-mapper.ts adds: the API server's field `causes`. */
export const errorEnvelope = errorEnvelopeSchema(
  z.object({
    causes: z
      .array(
        z.object({
          field: z.string().optional(),
          reason: z.string().optional(),
          message: z.string().optional(),
        }),
      )
      .optional(),
    issues: issuesSchema.optional(),
  }),
);
const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorEnvelope } },
});
export const errorResponses = {
  400: err('Invalid request (details.issues lists every problem)'),
  403: err('The service account may not do this'),
  404: err('Not found'),
  409: err('Already exists, or the resourceVersion is stale'),
  422: err('Rejected by the API server (details.causes lists the fields)'),
};

type Method = 'get' | 'put' | 'patch' | 'delete';
export type Ok = { status: 200 | 204; description: string; schema?: z.ZodType };

const okResponse = (ok: Ok) => ({
  [ok.status]: {
    description: ok.description,
    ...(ok.schema ? { content: { 'application/json': { schema: ok.schema } } } : {}),
  },
});

/** A route on one object (`{namespace}/{name}` checked up front) without a body: reads, deletes. */
export function itemRoute(o: { method: Method; path: string; tags: string[]; ok: Ok }) {
  return createRoute({
    method: o.method,
    path: o.path,
    tags: o.tags,
    request: { params: itemParams },
    responses: { ...okResponse(o.ok), 400: errorResponses[400], 404: errorResponses[404] },
  });
}

/** A write to one object with a JSON body: every error a write can meet is documented. */
export function itemWriteRoute<B extends z.ZodType>(o: {
  method: 'put' | 'patch';
  path: string;
  tags: string[];
  body: B;
  ok: Ok;
}) {
  return createRoute({
    method: o.method,
    path: o.path,
    tags: o.tags,
    request: {
      params: itemParams,
      body: { required: true, content: { 'application/json': { schema: o.body } } },
    },
    responses: { ...okResponse(o.ok), ...errorResponses },
  });
}

/** POST of one object to a namespaced collection, with a JSON body: every error a write can meet is documented. */
export function createInRoute<B extends z.ZodType>(o: {
  path: string;
  tags: string[];
  body: B;
  created: z.ZodType;
  description?: string;
}) {
  return createRoute({
    method: 'post',
    path: o.path,
    tags: o.tags,
    ...(o.description === undefined ? {} : { description: o.description }),
    request: {
      params: nsParams,
      body: { required: true, content: { 'application/json': { schema: o.body } } },
    },
    responses: {
      201: { description: 'Created', content: { 'application/json': { schema: o.created } } },
      ...errorResponses,
    },
  });
}

/** GET on a namespaced collection (`query`: its query parameters, e.g. paging). */
export function listRoute<Q extends z.ZodObject>(o: {
  path: string;
  tags: string[];
  description: string;
  schema: z.ZodType;
  query: Q;
}) {
  return createRoute({
    method: 'get',
    path: o.path,
    tags: o.tags,
    request: { params: nsParams, query: o.query },
    responses: {
      200: { description: o.description, content: { 'application/json': { schema: o.schema } } },
      400: errorResponses[400],
    },
  });
}
