import { describe, expect, it } from 'vitest';
import { addressAllowed, parseAllowedHosts, urlProblem } from './address.ts';

describe('addressAllowed', () => {
  it('refuses every non-public range, IPv4, IPv6 and IPv4-mapped alike', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      'not an address',
    ])
      expect(addressAllowed(a), a).toBe(false);
  });

  it('allows public unicast addresses', () => {
    for (const a of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(addressAllowed(a), a).toBe(true);
  });
});

describe('urlProblem', () => {
  const none = new Set<string>();
  it('accepts absolute https URLs with names or public addresses', () => {
    expect(urlProblem('https://catalog.example.com/any-name.json', none)).toBeUndefined();
    expect(urlProblem('https://8.8.8.8:8443/m', none)).toBeUndefined();
  });

  it('refuses what is not an absolute https URL, or carries credentials (invalid_url)', () => {
    for (const u of [
      'http://example.com/m',
      'ftp://example.com/m',
      '/m.json',
      'example.com',
      'https://u:p@x.com/',
    ])
      expect(urlProblem(u, none)?.code, u).toBe('invalid_url');
  });

  it('refuses private IP literals in every spelling (address_not_allowed), unless exempt', () => {
    for (const u of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://[::1]/',
      'https://[::ffff:7f00:1]/',
    ])
      expect(urlProblem(u, none)?.code, u).toBe('address_not_allowed');
    expect(urlProblem('https://127.0.0.1:8443/m', parseAllowedHosts('127.0.0.1:8443'))).toBeUndefined();
    expect(urlProblem('https://127.0.0.1:8444/m', parseAllowedHosts('127.0.0.1:8443'))?.code).toBe(
      'address_not_allowed',
    );
  });
});

describe('parseAllowedHosts', () => {
  it('reads a comma list of host:port, IPv6 in brackets, and refuses entries without a port', () => {
    expect([...parseAllowedHosts(' a.svc:8443, [::1]:9000 ,,Catalog.Local:443')]).toEqual([
      'a.svc:8443',
      '[::1]:9000',
      'catalog.local:443',
    ]);
    expect(parseAllowedHosts(undefined).size).toBe(0);
    expect(() => parseAllowedHosts('catalog.local')).toThrow(/needs a port/);
    expect(() => parseAllowedHosts('a b:1')).toThrow(/host:port/);
  });
});
