import { describe, expect, it } from 'vitest';
import { AddressRefused, clusterAddressRule, guardedLookup } from './index.ts';

describe('clusterAddressRule (Models, Memories, Tools, Evaluators)', () => {
  it('refuses link-local, cloud metadata, unspecified, broadcast, multicast and reserved addresses', () => {
    for (const a of [
      '169.254.169.254',
      '169.254.0.1',
      'fe80::1',
      '::ffff:169.254.169.254',
      '100.100.100.200',
      'fd00:ec2::254',
      '0.0.0.0',
      '::',
      '255.255.255.255',
      '224.0.0.1',
      'ff02::1',
      '240.0.0.1',
      'not-an-ip',
    ])
      expect(clusterAddressRule(a), a).toBeDefined();
  });

  it('allows what in-cluster services and `berth up` live on: loopback, private, public', () => {
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      'fd12::1',
      '8.8.8.8',
    ])
      expect(clusterAddressRule(a), a).toBeUndefined();
  });
});

describe('guardedLookup with a rule', () => {
  it('refuses a name when any of its addresses is refused', async () => {
    const lookup = guardedLookup(
      async () => [
        { address: '10.0.0.1', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
      clusterAddressRule,
    );
    const err = await new Promise<Error | null>((resolve) => lookup('svc.example', {}, (e) => resolve(e)));
    expect(err).toBeInstanceOf(AddressRefused);
    expect(err?.message).toContain('svc.example resolves to 169.254.169.254');
  });
});
