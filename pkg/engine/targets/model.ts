/** `model/<name>`: one chat completion over the conversation (history + input), no system prompt added. */
import type { Context } from '@opentelemetry/api';
import type { ChatCompletionMessageParam } from '../model-client.ts';
import type { Scope, TargetResult } from '../scope.ts';
import { callModel, requireModel } from './llm.ts';

export async function runModelTarget(
  scope: Scope,
  parent: Context,
  name: string,
  conversation: ChatCompletionMessageParam[],
): Promise<TargetResult> {
  const model = requireModel(scope, name, `Query ${scope.name}`, 'TargetNotFound');
  const answer = await callModel(scope, parent, model, conversation, {});
  return { content: answer.content, produced: [{ role: 'assistant', content: answer.content }] };
}
