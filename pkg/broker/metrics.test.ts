import { describe, expect, it } from 'vitest';
import { domainOfRoute, domainOfTopic } from './metrics.ts';

describe('broker metric domains', () => {
  it('maps every route pattern of the broker to its domain', () => {
    const cases: Array<[string, string | undefined]> = [
      ['/messages', 'messages'],
      ['/queries/:queryId/messages', 'messages'],
      ['/memory-status', 'messages'],
      ['/conversations', 'conversations'],
      ['/conversations/:conversationId', 'conversations'],
      ['/conversations/:conversationId/queries/:queryId/messages', 'messages'],
      ['/stream', 'chunks'],
      ['/stream/:query', 'chunks'],
      ['/stream/:query/complete', 'chunks'],
      ['/traces', 'traces'],
      ['/traces/:traceId', 'traces'],
      ['/v1/traces', 'traces'],
      ['/events/:queryId', 'events'],
      ['/sessions/:sessionId', 'sessions'],
      ['/openapi.json', undefined],
      ['unmatched', undefined],
    ];
    for (const [route, domain] of cases) expect(domainOfRoute(route), route).toBe(domain);
  });

  it('counts per-query chunk streams under chunks', () => {
    expect(domainOfTopic('stream/q-1')).toBe('chunks');
    expect(domainOfTopic('sessions')).toBe('sessions');
  });
});
