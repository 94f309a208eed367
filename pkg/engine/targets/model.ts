/**
 * `model/<name>`: one chat completion over the conversation (history + input), no system prompt
 * added. With a Query responseFormat (what /compat/v1 passes on) the answer is validated like an
 * agent's structured answer, with one repair round (structured.ts).
 */
import type { Context } from '@opentelemetry/api';
import type { ChatCompletionMessageParam } from '../model-client.ts';
import type { Scope, TargetResult } from '../scope.ts';
import { checkAnswer, invalidOutput, queryContract, repairRequest } from '../structured.ts';
import { callModel, requireModel } from './llm.ts';

export async function runModelTarget(
  scope: Scope,
  parent: Context,
  name: string,
  conversation: ChatCompletionMessageParam[],
): Promise<TargetResult> {
  const model = requireModel(scope, name, `Query ${scope.name}`, 'TargetNotFound');
  const contract = queryContract(scope.query);
  const messages = [...conversation];
  const opts = { responseFormat: contract?.responseFormat };
  let answer = await callModel(scope, parent, model, messages, opts);
  if (!contract)
    return { content: answer.content, produced: [{ role: 'assistant', content: answer.content }] };
  let checked = checkAnswer(contract, answer.content);
  if ('violation' in checked) {
    scope.emit('OutputRepairRequested', `Model ${name}: ${checked.violation}`, { model: name }, true);
    messages.push({ role: 'assistant', content: answer.content }, repairRequest(checked.violation));
    answer = await callModel(scope, parent, model, messages, opts);
    checked = checkAnswer(contract, answer.content);
    if ('violation' in checked) throw invalidOutput(contract, `Model ${name}`, checked.violation);
  }
  return { content: checked.ok, produced: [{ role: 'assistant', content: checked.ok }] };
}
