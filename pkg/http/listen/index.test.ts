import { describe, expect, it } from 'vitest';
import { isLoopbackHost, urlHost } from './index.ts';

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['192.168.1.1', false],
    ['fe80::1', false],
    ['no-such-host.invalid', false],
  ])('%s → %s', async (host, expected) => expect(await isLoopbackHost(host)).toBe(expected));
});

describe('urlHost', () => {
  it('shows a reachable host, with brackets for IPv6', () => {
    expect(urlHost(undefined)).toBe('127.0.0.1');
    expect(urlHost('0.0.0.0')).toBe('127.0.0.1');
    expect(urlHost('::')).toBe('127.0.0.1');
    expect(urlHost('10.0.0.5')).toBe('10.0.0.5');
    expect(urlHost('::1')).toBe('[::1]');
    expect(urlHost('localhost')).toBe('localhost');
  });
});
