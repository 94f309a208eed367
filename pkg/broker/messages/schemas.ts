import { z } from 'zod';
import { listQueryShape, offsetParam } from '../core/list.ts';

export const messageRecord = z.object({
  sequence: z.number().int(),
  timestamp: z.string(),
  conversation_id: z.string(),
  query_id: z.string(),
  message: z.object({ role: z.string(), content: z.unknown() }).passthrough(),
});

export const messagesQuery = z.object({
  conversation_id: z.string().min(1).optional(),
  query_id: z.string().min(1).optional(),
  offset: offsetParam,
  ...listQueryShape,
});

export const messagesList = z.object({
  items: z.array(messageRecord).optional(),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextCursor: z.number().int(),
  messages: z.array(messageRecord.omit({ sequence: true })).optional(),
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
});

export const conversationInfo = z.object({
  conversation_id: z.string(),
  sequence: z.number().int(),
  created_at: z.string(),
  last_activity: z.string(),
  message_count: z.number().int(),
  query_count: z.number().int(),
});

export const deleted = z.object({ deleted: z.number().int() }).passthrough();
