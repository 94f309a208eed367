import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { demoFetch } from './demo-model.ts';

const sdk = new OpenAI({
  apiKey: 'demo',
  baseURL: 'http://demo.invalid/v1',
  maxRetries: 0,
  fetch: demoFetch as unknown as typeof fetch,
});
const weather = {
  type: 'function' as const,
  function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('the built-in demo model through the openai SDK', () => {
  it('answers deterministically with token usage', async () => {
    const ask = () =>
      sdk.chat.completions.create({ model: 'berth-demo', messages: [{ role: 'user', content: 'Hi there' }] });
    const [a, b] = [await ask(), await ask()];
    expect(a.choices[0]?.message.content).toMatch(/^\[demo model\] You said: Hi there\. /);
    expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
    expect(a.usage).toMatchObject({ prompt_tokens: 2 });
    expect(a.usage?.total_tokens).toBe((a.usage?.prompt_tokens ?? 0) + (a.usage?.completion_tokens ?? 0));
  });

  it('streams the same answer word by word, with usage last', async () => {
    const stream = await sdk.chat.completions.create({
      model: 'berth-demo',
      messages: [{ role: 'user', content: 'Hi there' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: unknown;
    for await (const c of stream) {
      if (c.choices[0]?.delta.content) pieces.push(c.choices[0].delta.content);
      if (c.usage) usage = c.usage;
    }
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join('')).toMatch(/^\[demo model\] You said: Hi there\./);
    expect(usage).toMatchObject({ prompt_tokens: 2 });
  });

  it('calls a tool the question names, with arguments from its schema, then answers with the result', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
    ];
    const first = await sdk.chat.completions.create({ model: 'm', messages, tools: [weather] });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function).toEqual({
      name: 'weather',
      arguments: '{"city":"Paris"}',
    });
    messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam, {
      role: 'tool',
      tool_call_id: call?.id ?? '',
      content: 'sunny, 21 C',
    });
    const second = await sdk.chat.completions.create({ model: 'm', messages, tools: [weather] });
    expect(second.choices[0]?.message.content).toBe('[demo model] The tool answered: sunny, 21 C');
  });

  it('gives a tool what follows the colon after its name (the MCP demo tools: word_count, echo)', async () => {
    const wordCount = {
      type: 'function' as const,
      function: {
        name: 'word_count',
        parameters: { type: 'object', properties: { text: { type: 'string' } } },
      },
    };
    const ask = async (content: string) => {
      const r = await sdk.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content }],
        tools: [weather, wordCount],
      });
      const call = r.choices[0]?.message.tool_calls?.[0];
      return call?.type === 'function' ? call.function : undefined;
    };
    expect(await ask('Count them with word_count: the quick brown Fox jumps')).toEqual({
      name: 'word_count',
      arguments: '{"text":"the quick brown Fox jumps"}',
    });
    // Its spoken form, and a colon before the name does not count.
    expect(await ask('Note: run word count on Berth')).toEqual({
      name: 'word_count',
      arguments: '{"text":"Berth"}',
    });
    expect(await ask('What is the weather in Paris?')).toEqual({
      name: 'weather',
      arguments: '{"city":"Paris"}',
    });
  });

  it('does not call a tool the question does not name', async () => {
    const r = await sdk.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      tools: [weather],
    });
    expect(r.choices[0]?.message.tool_calls).toBeUndefined();
    expect(r.choices[0]?.finish_reason).toBe('stop');
  });
});
