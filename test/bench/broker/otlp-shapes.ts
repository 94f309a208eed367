/**
 * OTLP/JSON exports as the benchmarks send them: bare spans (ids, name, times, one attribute) and
 * agent-shaped ones — 20 spans of chat and tool calls with gen_ai attributes, an event each, and
 * the resource and scope an instrumented agent sends (≈ 16–17 KB of JSON per export).
 */
const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

export function bareExport(spans = 100): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeSpans: [
          {
            scope: { name: 'bench' },
            spans: Array.from({ length: spans }, (_, i) => ({
              traceId: hex(1 + Math.floor(i / 10), 32),
              spanId: hex(i + 1, 16),
              name: `span-${i}`,
              kind: 1,
              startTimeUnixNano: '1700000000000000000',
              endTimeUnixNano: '1700000000100000000',
              attributes: [{ key: 'svc.session.id', value: { stringValue: 'bench' } }],
            })),
          },
        ],
      },
    ],
  });
}

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: String(v) } });

export function agentExport(seed = 1): string {
  const traceId = hex(seed, 32);
  const spans = Array.from({ length: 20 }, (_, i) => {
    const tool = i % 2 === 1;
    const start = 1_700_000_000_000_000_000n + BigInt(i) * 50_000_000n;
    return {
      traceId,
      spanId: hex(seed * 100 + i + 1, 16),
      parentSpanId: i ? hex(seed * 100 + 1, 16) : '',
      name: tool ? 'execute_tool weather' : 'chat gpt-4o-mini',
      kind: 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 40_000_000n),
      attributes: tool
        ? [
            str('gen_ai.operation.name', 'execute_tool'),
            str('gen_ai.tool.name', 'weather'),
            str('gen_ai.tool.call.id', `call_${seed}_${i}`),
            str('gen_ai.tool.type', 'function'),
            str('svc.session.id', `session-${seed % 50}`),
            str('session.id', `session-${seed % 50}`),
            str('berth.query', `query-${seed}`),
            str('berth.tool.arguments', '{"city":"Paris","units":"metric"}'),
          ]
        : [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.system', 'openai'),
            str('gen_ai.request.model', 'gpt-4o-mini'),
            str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
            int('gen_ai.usage.input_tokens', 420 + i),
            int('gen_ai.usage.output_tokens', 37 + i),
            str('gen_ai.response.finish_reasons', 'tool_calls'),
            str('svc.session.id', `session-${seed % 50}`),
            str('session.id', `session-${seed % 50}`),
            str('berth.query', `query-${seed}`),
            str('berth.agent', 'assistant'),
          ],
      events: [
        {
          timeUnixNano: String(start + 10_000_000n),
          name: tool ? 'gen_ai.tool.message' : 'gen_ai.choice',
          attributes: [
            str('gen_ai.system', 'openai'),
            str(
              'message',
              tool ? '{"temperature":18,"conditions":"cloudy"}' : 'Let me check the weather in Paris.',
            ),
          ],
        },
      ],
      status: { code: 1 },
    };
  });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [
            str('service.name', 'berth-engine'),
            str('service.version', '0.1.0'),
            str('service.namespace', 'berth'),
            str('telemetry.sdk.name', 'opentelemetry'),
            str('telemetry.sdk.language', 'nodejs'),
            str('telemetry.sdk.version', '3.1.1'),
            str('k8s.namespace.name', 'default'),
            str('k8s.pod.name', 'berth-controller-7d9f8b6c5-x2x9k'),
            str('host.name', 'berth-controller-7d9f8b6c5-x2x9k'),
          ],
        },
        scopeSpans: [{ scope: { name: 'berth-engine', version: '0.1.0' }, spans }],
      },
    ],
  });
}
