/**
 * HTTP calls of Tools, from a `tool/<name>` query or an agent's function call. Arguments that are JSON
 * are sent as they are (the model produced them from the Tool's inputSchema); plain text is wrapped as
 * `{"input": text}` so every tool receives JSON. GET and DELETE carry them as query parameters.
 */
import type { Tool } from '../api/index.ts';
import type { ResourceLookup } from './contract.ts';
import { durationField } from './duration.ts';
import { resolveHeaders } from './headers.ts';
import { describeNetworkError, type EngineFetch, HttpError } from './http.ts';

const DEFAULT_TOOL_TIMEOUT = '30s';
const MAX_RESULT_CHARS = 100_000;

function asJson(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return { input };
  }
}

/** The built-in demo tool's answer: deterministic, and says where it comes from. */
function demoToolAnswer(name: string, args: unknown): string {
  return JSON.stringify({ tool: name, arguments: args, demo: true, answer: `demo result of ${name}` });
}

export async function callTool(
  tool: Tool,
  input: string,
  deps: { fetch: EngineFetch; lookup: ResourceLookup; signal: AbortSignal },
): Promise<string> {
  const owner = `Tool ${tool.metadata.name}`;
  if (tool.spec.type === 'demo') return demoToolAnswer(tool.metadata.name, asJson(input));
  if (!tool.spec.http) throw new Error(`${owner}: spec.http is required for an http tool`);
  const ns = tool.metadata.namespace ?? 'default';
  const { url, method = 'POST', timeout } = tool.spec.http;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new Error(`${owner}: url "${url}" is not an absolute URL`);
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new Error(`${owner}: url "${url}" must be http:// or https://`);
  }
  const configured = resolveHeaders(tool.spec.http.headers, ns, deps.lookup, owner);
  const headers: Record<string, string> = {
    accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
    ...configured,
  };
  const args = asJson(input);
  let body: string | undefined;
  if (method === 'GET' || method === 'DELETE') {
    if (args && typeof args === 'object' && !Array.isArray(args)) {
      for (const [k, v] of Object.entries(args)) {
        target.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      }
    }
  } else {
    body = JSON.stringify(args);
    headers['content-type'] = 'application/json';
  }
  const timeoutMs = durationField(timeout, DEFAULT_TOOL_TIMEOUT, `${owner}: spec.http.timeout`);
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(timeoutMs)]);
  const what = `${owner}: ${method} ${target.origin}${target.pathname}`;
  let res: Response;
  let text: string;
  try {
    res = await deps.fetch(target, {
      method,
      headers,
      body,
      signal,
      // Its answer is read under the tool cap; a redirect to another origin loses every configured header.
      upstream: { kind: 'tool', configured: Object.keys(configured) },
    });
    text = await res.text();
  } catch (err) {
    if (deps.signal.aborted) throw deps.signal.reason ?? err;
    if (signal.aborted) throw new Error(`${what}: no answer within ${timeout ?? DEFAULT_TOOL_TIMEOUT}`);
    throw new Error(`${what}: ${describeNetworkError(err)}`);
  }
  if (!res.ok) throw new HttpError(what, res.status, text.slice(0, 300));
  return text.length > MAX_RESULT_CHARS ? text.slice(0, MAX_RESULT_CHARS) : text;
}
