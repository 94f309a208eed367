import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../log/index.ts';
import { acceptsApiKeys, acceptsJwt, resolveAuthMode } from './mode.ts';

describe('resolveAuthMode', () => {
  it('accepts the four modes, case-insensitively', () => {
    for (const m of ['open', 'basic', 'sso', 'hybrid'] as const) {
      expect(resolveAuthMode(m)).toBe(m);
      expect(resolveAuthMode(` ${m.toUpperCase()} `)).toBe(m);
    }
  });

  it('treats unset as open without a warning', () => {
    const warn = vi.fn<Logger['warn']>();
    expect(resolveAuthMode(undefined, { warn })).toBe('open');
    expect(resolveAuthMode('', { warn })).toBe('open');
    expect(warn).not.toHaveBeenCalled();
  });

  it('falls back to open on an invalid value and warns once per value', () => {
    const warn = vi.fn<Logger['warn']>();
    expect(resolveAuthMode('oidc-please', { warn })).toBe('open');
    expect(resolveAuthMode('oidc-please', { warn })).toBe('open');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[1]).toMatch(/invalid AUTH_MODE "oidc-please".*open/);
  });

  it('maps modes to accepted credential kinds', () => {
    expect([acceptsApiKeys('basic'), acceptsApiKeys('hybrid'), acceptsApiKeys('sso')]).toEqual([
      true,
      true,
      false,
    ]);
    expect([acceptsJwt('sso'), acceptsJwt('hybrid'), acceptsJwt('basic')]).toEqual([true, true, false]);
  });
});
