/** The Query's input, validated: the API server only checks that it is present, so the engine checks its shape. */
import { type Query, queryInputSchema } from '../api/index.ts';
import type { StoredMessage } from './memory-client.ts';

export interface QueryInput {
  messages: StoredMessage[];
  /** What a tool target receives, and what events show: the string, or the last user message. */
  text: string;
}

export function parseInput(query: Query): QueryInput {
  const parsed = queryInputSchema.safeParse(query.spec?.input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at spec.input.${issue.path.join('.')}` : '';
    throw new Error(
      `spec.input must be a non-empty string or a non-empty array of {role, content} messages${where}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const input = parsed.data;
  if (typeof input === 'string') {
    if (!input.trim()) throw new Error('spec.input is empty');
    return { messages: [{ role: 'user', content: input }], text: input };
  }
  const messages = input.map((m) => ({ ...m }) as StoredMessage);
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  return { messages, text: lastUser?.content ?? messages[messages.length - 1]?.content ?? '' };
}

/** A short, single-line view of the input for events and logs (the full text is never logged). */
export function inputPreview(query: Query): string {
  const input = query.spec?.input as unknown;
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) {
    const last = input[input.length - 1] as { content?: unknown } | undefined;
    return typeof last?.content === 'string' ? last.content : '';
  }
  return '';
}
