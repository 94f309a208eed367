/** One model call of a query, with its events, span, usage accounting and chunk forwarding. */
import type { Context } from '@opentelemetry/api';
import { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Model, QueryEndReason } from '../../api/index.ts';
import { failedWith, found, QueryFailure } from '../failure.ts';
import { describeNetworkError } from '../http.ts';
import {
  type ChatCompletionMessageParam,
  type ChatCompletionTool,
  complete,
  type ModelAnswer,
} from '../model-client.ts';
import { addUsage, type Scope } from '../scope.ts';
import { inSpan } from '../tracing.ts';
import { boundedText } from '../upstream.ts';

/**
 * Only chunks a chat client can show are forwarded: content and the final finish reason. Tool-call
 * deltas of an agent's intermediate turns are internal to the engine and would confuse SDK clients that
 * never declared those tools.
 */
function forwardable(chunk: ChatCompletionChunk): boolean {
  const choice = chunk.choices[0];
  if (!choice) return false;
  if (choice.delta?.content) return true;
  return !!choice.finish_reason && choice.finish_reason !== 'tool_calls';
}

/** The SDK's message quotes the model's error answer (its first ENGINE_MAX_ERROR_BODY_BYTES): cut shorter. */
const MAX_MODEL_DETAIL = 512;

/** How long after the Query's deadline the SDK's own timeout of a model call fires (see modelCallTimeoutMs). */
export const SDK_TIMEOUT_AFTER_DEADLINE_MS = 1000;

/**
 * The SDK's timeout for a model call: a backstop a little after the Query's deadline. At the
 * deadline the run's own timer aborts the call through the scope's signal and the Query ends as
 * `Timeout`; with the SDK's timer due at the same instant the two raced, and a Query that ran out of
 * time could end as `ModelError` ("Request timed out.").
 */
export function modelCallTimeoutMs(deadline: number, now = Date.now()): number {
  return deadline - now + SDK_TIMEOUT_AFTER_DEADLINE_MS;
}

function describeModelError(model: Model, err: unknown): string {
  const owner = boundedText(`Model ${model.metadata.name} (${model.spec.baseUrl ?? model.spec.type})`, 256);
  if (err instanceof APIError && err.status !== undefined)
    return `${owner}: HTTP ${err.status}: ${boundedText(err.message, MAX_MODEL_DETAIL)}`;
  return `${owner}: ${boundedText(describeNetworkError(err), MAX_MODEL_DETAIL)}`;
}

export async function callModel(
  scope: Scope,
  parent: Context,
  model: Model,
  messages: ChatCompletionMessageParam[],
  opts: { tools?: ChatCompletionTool[]; agent?: string; responseFormat?: Record<string, unknown> },
): Promise<ModelAnswer> {
  let client: ReturnType<typeof scope.deps.models.client>;
  try {
    client = scope.deps.models.client(model, scope.deps.lookup);
  } catch (err) {
    throw failedWith('InvalidTarget', err); // its address or a Secret it needs is not usable
  }
  const who = { model: model.metadata.name, providerModel: model.spec.model, agent: opts.agent };
  scope.emit('LLMCallStart', `Calling model ${model.metadata.name}`, { ...who, messages: messages.length });
  const started = performance.now();
  const stream = scope.stream;
  return inSpan(
    scope.deps.tracer,
    parent,
    'llm.call',
    {
      'gen_ai.system': model.spec.type,
      'gen_ai.request.model': model.spec.model,
      'berth.model': model.metadata.name,
    },
    async (_ctx, span) => {
      let answer: ModelAnswer;
      try {
        answer = await complete(client, model.spec.model, {
          messages,
          tools: opts.tools,
          responseFormat: opts.responseFormat,
          signal: scope.signal,
          timeoutMs: modelCallTimeoutMs(scope.deadline),
          onChunk: stream
            ? (chunk) => {
                if (forwardable(chunk)) stream.write(chunk);
              }
            : undefined,
        });
      } catch (err) {
        if (scope.signal.aborted) throw err;
        const message = describeModelError(model, err);
        scope.emit('LLMCallError', message, { ...who, error: message }, true);
        throw new QueryFailure('ModelError', message);
      }
      addUsage(scope.usage, answer.usage);
      span.setAttributes({
        'gen_ai.usage.input_tokens': answer.usage.promptTokens,
        'gen_ai.usage.output_tokens': answer.usage.completionTokens,
        'gen_ai.response.finish_reasons': [answer.finishReason],
      });
      scope.emit('LLMCallComplete', `Model ${model.metadata.name} answered`, {
        ...who,
        durationMs: Math.round(performance.now() - started),
        promptTokens: answer.usage.promptTokens,
        completionTokens: answer.usage.completionTokens,
        totalTokens: answer.usage.totalTokens,
        toolCalls: answer.toolCalls.length,
      });
      return answer;
    },
  );
}

/** The Model an agent (or a model target) names, or an error naming what is missing (see `found`). */
export function requireModel(scope: Scope, name: string, by: string, missing?: QueryEndReason): Model {
  const { namespace } = scope;
  return found(scope.deps.lookup.model(namespace, name), `${by}: Model ${name}`, namespace, missing);
}
