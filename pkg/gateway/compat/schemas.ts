import { z } from 'zod';

const textPart = z.object({ type: z.literal('text'), text: z.string() });
/** Content as a string or the SDKs' array of parts (text parts are joined). */
const content = z
  .union([z.string(), z.array(z.union([textPart, z.object({ type: z.string() }).passthrough()]))])
  .nullable();

export const chatMessage = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: content.optional(),
    name: z.string().optional(),
  })
  .passthrough();

/** OpenAI's response_format: passed to the target as the Query's spec.responseFormat. */
export const responseFormat = z
  .object({
    type: z.enum(['text', 'json_object', 'json_schema']),
    json_schema: z
      .object({
        name: z.string().min(1).max(64),
        description: z.string().optional(),
        schema: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullable().optional(),
      })
      .optional(),
  })
  .refine((f) => f.type !== 'json_schema' || !!f.json_schema, {
    message: 'json_schema is required when type is json_schema',
    path: ['json_schema'],
  });

export const chatRequest = z
  .object({
    model: z.string().min(1, 'model is required, e.g. "agent/<name>"'),
    messages: z.array(chatMessage).min(1, 'messages must contain at least one message'),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    response_format: responseFormat.nullable().optional(),
  })
  .passthrough();
export type ChatRequest = z.infer<typeof chatRequest>;

export const modelItem = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
});
export const modelList = z.object({ object: z.literal('list'), data: z.array(modelItem) });

export function textOf(c: z.infer<typeof content> | undefined): string {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  return c.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join('');
}
