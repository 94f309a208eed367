import type { Query } from '../../api/index.ts';

/** The non-streaming chat completion of a finished Query, with the `svc` extension. */
export function completionOf(query: Query, model: string) {
  const status = query.status ?? {};
  const usage = status.tokenUsage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const created = Math.floor(
    (Date.parse(String(query.metadata.creationTimestamp ?? '')) || Date.now()) / 1000,
  );
  return {
    id: query.metadata.name,
    object: 'chat.completion' as const,
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: status.response?.content ?? '' },
        finish_reason: 'stop' as const,
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.totalTokens,
    },
    svc: {
      query_name: query.metadata.name,
      annotations: query.metadata.annotations ?? {},
      completedQuery: {
        metadata: { name: query.metadata.name, namespace: query.metadata.namespace },
        status: { phase: status.phase, a2a: { contextId: status.a2a?.contextId ?? status.conversationId } },
      },
    },
  };
}

export function chunkOf(
  id: string,
  model: string,
  created: number,
  delta: Record<string, unknown>,
  finish: string | null = null,
) {
  return {
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  };
}
