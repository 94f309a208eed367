/**
 * The demo MCP server's tools (`berth up` serves them offline, like the demo model): small and
 * deterministic, so samples and tests can rely on their answers.
 * - `echo {text}` answers the text unchanged;
 * - `word_count {text}` answers "<n> words" (whitespace-separated), `{words: n}` as structured content;
 * - `get_time {}` answers the current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (the format is fixed).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export const DEMO_MCP_SERVER_NAME = 'berth-demo-tools';
/** The longest text a tool takes: the demo is small. */
const TEXT_MAX = 100_000;

export const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** `2026-07-28T09:30:00Z`: ISO 8601 in UTC, to the second. */
export const timeOf = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

const text = (t: string) => [{ type: 'text' as const, text: t }];
const pure = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** A fresh server with the three tools (the SDK builds one per request: createMcpHandler's factory). */
export function demoMcpServer(now: () => Date = () => new Date()): McpServer {
  const server = new McpServer(
    { name: DEMO_MCP_SERVER_NAME, version: '1.0.0' },
    { instructions: 'Demo tools of Berth: echo, word_count and get_time. Deterministic, offline.' },
  );
  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Answers the text it is given, unchanged',
      inputSchema: z.object({ text: z.string().max(TEXT_MAX).describe('The text to echo') }),
      annotations: pure,
    },
    ({ text: t }) => ({ content: text(t) }),
  );
  server.registerTool(
    'word_count',
    {
      title: 'Word count',
      description: 'Counts the whitespace-separated words of a text; answers "<n> words"',
      inputSchema: z.object({ text: z.string().max(TEXT_MAX).describe('The text whose words to count') }),
      outputSchema: z.object({ words: z.number().int().describe('How many words') }),
      annotations: pure,
    },
    ({ text: t }) => {
      const words = countWords(t);
      return { content: text(`${words} words`), structuredContent: { words } };
    },
  );
  server.registerTool(
    'get_time',
    {
      title: 'Current time',
      description: 'The current time in UTC, as YYYY-MM-DDTHH:MM:SSZ',
      inputSchema: z.object({}),
      annotations: { ...pure, idempotentHint: false },
    },
    () => ({ content: text(timeOf(now())) }),
  );
  return server;
}
