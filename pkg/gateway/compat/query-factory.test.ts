import { describe, expect, it } from 'vitest';
import { annotationsOf, buildQuery, ChatRequestError, parseTarget } from './query-factory.ts';
import { chatRequest } from './schemas.ts';

const req = (over: Record<string, unknown> = {}) =>
  chatRequest.parse({ model: 'agent/helper', messages: [{ role: 'user', content: 'hi' }], ...over });

describe('parseTarget', () => {
  it('splits type and name', () => {
    expect(parseTarget('team/a-team')).toEqual({ type: 'team', name: 'a-team' });
  });
  it.each([
    'gpt-4o',
    'robot/x',
    'agent/',
    '/x',
    // Names of Object.prototype's members are not prefixes (an `in` check once let them through).
    'constructor/x',
    '__proto__/x',
    'toString/x',
    'hasOwnProperty/x',
    'valueOf/x',
  ])('rejects %s with a 400 naming the model param', (m) => {
    const err = (() => {
      try {
        parseTarget(m);
      } catch (e) {
        return e as ChatRequestError;
      }
    })();
    expect(err).toBeInstanceOf(ChatRequestError);
    expect(err?.status).toBe(400);
    expect(err?.param).toBe('model');
  });
});

describe('annotationsOf', () => {
  it('merges queryAnnotations, svc.annotations and the streaming flag, keeping other metadata', () => {
    const a = annotationsOf(
      req({
        stream: true,
        metadata: {
          queryAnnotations: '{"team.io/owner":"qa"}',
          svc: JSON.stringify({ annotations: { 'x/y': 'z' } }),
          user: 'u1',
        },
      }),
    );
    expect(a).toEqual({
      'team.io/owner': 'qa',
      'x/y': 'z',
      'berth.dev/streaming-enabled': 'true',
      'berth.dev/chat-metadata': '{"user":"u1"}',
    });
  });
  it('reports malformed JSON metadata as a 400 on that parameter', () => {
    expect(() => annotationsOf(req({ metadata: { queryAnnotations: '{nope' } }))).toThrow(
      /metadata\.queryAnnotations must be a JSON object string/,
    );
    expect(() => annotationsOf(req({ metadata: { svc: '[1]' } }))).toThrow(
      /metadata\.svc must be a JSON object/,
    );
  });
});

describe('buildQuery', () => {
  it('passes the whole history, the session and conversation, and names the query <prefix>-query-<suffix>', () => {
    const q = buildQuery(
      req({
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello ' },
              { type: 'text', text: 'there' },
            ],
          },
        ],
        metadata: { sessionId: 's1', conversationId: 'c1' },
      }),
      'ns1',
    );
    expect(q.metadata.name).toMatch(/^chat-query-[0-9a-f]{10}$/);
    expect(q.metadata.namespace).toBe('ns1');
    expect(q.spec.input).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(q.spec).toMatchObject({
      target: { type: 'agent', name: 'helper' },
      sessionId: 's1',
      conversationId: 'c1',
    });
    expect(q.metadata.annotations?.['berth.dev/streaming-enabled']).toBe('false');
    expect(q.metadata.finalizers).toEqual(['berth.dev/query-cleanup']);
  });
});
