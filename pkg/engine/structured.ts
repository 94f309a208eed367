/**
 * Structured answers (docs/approvals.md, "Structured output"): an Agent's `spec.outputSchema`, or a
 * Query's `spec.responseFormat` (what /compat/v1 passes on), becomes the model call's
 * `response_format` and an instruction in the prompt; the final answer is parsed and validated, one
 * repair round asks the model to fix what was wrong, and a second failure ends the query
 * `InvalidOutput` naming the violation.
 */
import type { Agent, Query } from '../api/index.ts';
import { QueryFailure } from './failure.ts';
import { describeIssues, schemaIssues } from './json-schema.ts';
import type { ChatCompletionMessageParam } from './model-client.ts';
import { sanitizeName } from './scope.ts';

export interface OutputContract {
  /** What the model call sends as `response_format`. */
  responseFormat: Record<string, unknown>;
  /** The schema the answer must satisfy; absent for plain JSON mode (any JSON object). */
  schema?: Record<string, unknown>;
  /** Names the contract in messages: `spec.outputSchema of Agent x`, `spec.responseFormat of Query q`. */
  source: string;
  /** Whose the schema is: a schema that cannot be used is InvalidTarget (agent) or InvalidQuery. */
  owner: 'agent' | 'query';
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/** The contract of a Query's responseFormat (`text` or none: no contract). */
export function queryContract(query: Query): OutputContract | undefined {
  const rf = query.spec.responseFormat;
  if (!isObject(rf) || rf.type === undefined || rf.type === 'text') return undefined;
  const source = `spec.responseFormat of Query ${query.metadata.name}`;
  if (rf.type === 'json_object') return { responseFormat: { type: 'json_object' }, source, owner: 'query' };
  const js = rf.json_schema;
  if (rf.type !== 'json_schema' || !isObject(js))
    throw new QueryFailure(
      'InvalidQuery',
      `${source}: type must be text, json_object or json_schema with a json_schema object`,
    );
  const schema = isObject(js.schema) ? js.schema : undefined;
  return { responseFormat: { type: 'json_schema', json_schema: js }, schema, source, owner: 'query' };
}

/** An Agent's contract: its outputSchema, else the Query's responseFormat when the agent is its target. */
export function agentContract(agent: Agent, query: Query, isTarget: boolean): OutputContract | undefined {
  const schema = agent.spec.outputSchema;
  if (isObject(schema))
    return {
      responseFormat: {
        type: 'json_schema',
        json_schema: { name: sanitizeName(agent.metadata.name), schema, strict: false },
      },
      schema,
      source: `spec.outputSchema of Agent ${agent.metadata.name}`,
      owner: 'agent',
    };
  return isTarget ? queryContract(query) : undefined;
}

/** The prompt line that asks for the JSON (also for providers that ignore response_format). */
export function instruction(c: OutputContract): string {
  return c.schema
    ? `Answer with JSON only (no prose, no code fence) that satisfies this JSON Schema:\n${JSON.stringify(c.schema)}`
    : 'Answer with a JSON object only (no prose, no code fence).';
}

/** A model's JSON, a surrounding ```json fence tolerated. */
function parseAnswer(content: string): { value: unknown; text: string } | { error: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(content);
  const text = (fenced ? fenced[1] : content)?.trim() ?? '';
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch (err) {
    return { error: `the answer is not JSON (${(err as Error).message})` };
  }
}

/**
 * The answer as stored (the JSON without a fence), or the violation. A schema the validator cannot
 * use is the target's fault (InvalidTarget) or the query's (InvalidQuery), never the model's.
 */
export function checkAnswer(c: OutputContract, content: string): { ok: string } | { violation: string } {
  const parsed = parseAnswer(content);
  if ('error' in parsed) return { violation: parsed.error };
  if (!c.schema)
    return isObject(parsed.value) ? { ok: parsed.text } : { violation: 'the answer is not a JSON object' };
  let issues: ReturnType<typeof schemaIssues>;
  try {
    issues = schemaIssues(c.schema, parsed.value);
  } catch (err) {
    const reason = c.owner === 'query' ? 'InvalidQuery' : 'InvalidTarget';
    throw new QueryFailure(reason, `${c.source}: ${(err as Error).message}`);
  }
  return issues.length ? { violation: describeIssues(issues) } : { ok: parsed.text };
}

/** The repair round's request, after the assistant's failed answer. */
export function repairRequest(violation: string): ChatCompletionMessageParam {
  return {
    role: 'user',
    content: `Your answer does not satisfy the required format: ${violation}. Answer again with only the corrected JSON.`,
  };
}

/** The failure after the repair round; `who` answered (`Agent x`, `Model m`). */
export function invalidOutput(c: OutputContract, who: string, violation: string): QueryFailure {
  return new QueryFailure(
    'InvalidOutput',
    `the answer of ${who} does not satisfy ${c.source} after one repair round: ${violation}`,
  );
}
