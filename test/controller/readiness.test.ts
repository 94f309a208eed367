/**
 * The controller's probes: `/readyz` answers ready once the caches synced, and turns unready the
 * moment a stop begins (while runs are aborted and the lease released), like the API service and
 * the broker while they drain; `/healthz` stays up until the probes server stops, last.
 */
import { describe, expect, it } from 'vitest';
import { startController } from '../../pkg/controller/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';

describe('controller readiness', () => {
  it('is ready once synced and unready from the first moment of a stop', async () => {
    const ns = await createNamespace('readiness');
    const ctl = await startController({
      kc: kubeConfig('controller'),
      namespace: ns,
      leaderElection: false,
      probes: { port: 0, host: '127.0.0.1' },
      metrics: false,
      logger: createLogger({ level: 'silent' }),
    });
    const url = `http://127.0.0.1:${ctl.probesPort}`;
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).status).toBe('ready');
    expect(ctl.ready()).toBe(true);
    const stopped = ctl.stop();
    expect(ctl.ready()).toBe(false); // the probe's own answer from here on
    await stopped;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
