import { describe, expect, it } from 'vitest';
import { safeCallbackUrl } from './callback-url.ts';

const root = {
  baseUrl: 'https://berth.example.com',
  basePath: '',
  allowedOrigins: ['https://hub-b.example'],
};
const tenant = { ...root, baseUrl: 'https://berth.example.com/team-a', basePath: '/team-a' };

describe('safeCallbackUrl', () => {
  it.each([
    [undefined, '/'],
    ['', '/'],
    ['/queries?x=1#y', '/queries?x=1#y'],
    ['https://berth.example.com/agents?q=1', '/agents?q=1'],
    ['https://hub-b.example/team-b/chat', 'https://hub-b.example/team-b/chat'],
    ['https://evil.example/steal', '/'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['\\\\evil.example', '/'],
    ['/\t/evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['data:text/html,hi', '/'],
    ['http://berth.example.com/x', '/'], // another scheme is another origin
    ['https://berth.example.com.evil.example/', '/'],
    ['https://hub-b.example.evil/x', '/'],
    ['/api/auth/signin', '/'], // would loop
    ['not a url', '/'],
  ])('at the root: %s → %s', (raw, expected) => expect(safeCallbackUrl(raw, root)).toBe(expected));

  it.each([
    ['/team-a/queries', '/team-a/queries'],
    ['/team-a', '/team-a'],
    ['/team-b/queries', '/team-a/'], // another tenant's dashboard is not this one's to send to
    ['/team-abc', '/team-a/'],
    ['/queries', '/team-a/'],
    ['https://berth.example.com/team-a/chat', '/team-a/chat'],
    ['/team-a/api/auth/callback/x', '/team-a/'],
  ])('under a base path: %s → %s', (raw, expected) => expect(safeCallbackUrl(raw, tenant)).toBe(expected));
});
