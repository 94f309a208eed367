import type { MiddlewareHandler } from 'hono';
import { httpError } from '../../http/index.ts';

/** The 403 of a request for a namespace this instance does not serve. */
export const otherNamespace = (asked: string, served: string) =>
  httpError(
    'forbidden',
    `this API instance serves namespace "${served}" only; "${asked}" is served by its own instance`,
  );

/**
 * An instance installed for one namespace (NAMESPACE / --namespace) answers for that namespace only,
 * whatever its identity could reach: a request naming another one is refused here, before any call
 * to the API server — also for the generic API's `?namespace=`. Without a confinement the instance
 * serves what its identity may access.
 */
export function confineToNamespace(served: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (served !== undefined) {
      const asked = c.req.param('namespace') ?? c.req.query('namespace');
      if (asked !== undefined && asked !== '' && asked !== served) throw otherNamespace(asked, served);
    }
    await next();
  };
}
