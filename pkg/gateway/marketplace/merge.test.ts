import { describe, expect, it } from 'vitest';
import type { HttpError } from '../../http/index.ts';
import { merge } from './merge.ts';

const url = 'https://a.example.com/m.json';
const privateSource = {
  name: 'p',
  source: { url, auth: { scheme: 'bearer' as const, secretRef: 'marketplace-source-p-auth' } },
};
const status = (f: () => unknown) => {
  try {
    f();
    return 0;
  } catch (err) {
    return (err as HttpError).status;
  }
};

describe('merge (PATCH, rule 3)', () => {
  it('keeps absent fields and the credential while the url stays', () => {
    expect(merge('p', privateSource, { displayName: 'P' })).toEqual({
      next: { url, displayName: 'P', auth: privateSource.source.auth },
      dropSecret: false,
    });
  });

  it('needs the credential again for a new url; never carries the Secret there', () => {
    expect(status(() => merge('p', privateSource, { url: 'https://b.example.com/m.json' }))).toBe(400);
    const moved = merge('p', privateSource, {
      url: 'https://b.example.com/m.json',
      auth: { scheme: 'basic', credential: 'new' },
    });
    expect(moved.credential).toEqual({ scheme: 'basic', value: 'new' });
    expect(moved.next.auth).toEqual({ scheme: 'basic', secretRef: 'marketplace-source-p-auth' });
  });

  it('auth: null makes the source public and drops only a Secret this API named', () => {
    expect(merge('p', privateSource, { auth: null, url: 'https://b.example.com/m.json' })).toEqual({
      next: { url: 'https://b.example.com/m.json' },
      dropSecret: true,
    });
    const seeded = {
      name: 'p',
      source: { url, auth: { scheme: 'bearer' as const, secretRef: 'chart-secret' } },
    };
    expect(merge('p', seeded, { auth: null }).dropSecret).toBe(false);
  });

  it('lets a public source move freely and refuses a credential on a name no Secret can carry', () => {
    expect(merge('q', { name: 'q', source: { url } }, { url: 'https://c.example.com/' }).next.url).toBe(
      'https://c.example.com/',
    );
    expect(
      status(() =>
        merge('Q_1', { name: 'Q_1', source: { url } }, { auth: { scheme: 'bearer', credential: 'x' } }),
      ),
    ).toBe(422);
  });

  it('repairs an entry that no longer decodes when given a url', () => {
    expect(merge('r', { name: 'r', problem: 'not JSON' }, { url }).next).toEqual({ url });
  });
});
