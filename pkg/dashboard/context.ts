import type { RequestIdVariables } from '../http/index.ts';
import type { SessionUser } from './session/store.ts';

/** What the dashboard's guards set on its context. */
export type DashboardVariables = {
  /** The Authorization header the proxy sends to the API: the session's bearer, or the user's Basic. */
  upstreamAuthorization?: string;
  /** The signed-in dashboard user (sso/hybrid). */
  dashboardUser?: SessionUser;
};

/** The dashboard app's Hono environment: its guards' variables and the request id. */
export type DashboardEnv = { Variables: DashboardVariables & RequestIdVariables };

/** The base path applied to every route, redirect, cookie path and asset URL. */
export class Paths {
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  /** `/x` under the base path. */
  to(path: string): string {
    return `${this.base}${path}`;
  }

  /** The dashboard's home: `<base>/`. */
  get home(): string {
    return `${this.base}/`;
  }

  get api(): string {
    return `${this.base}/api`;
  }

  get auth(): string {
    return `${this.base}/api/auth`;
  }

  isApi(path: string): boolean {
    return path === this.api || path.startsWith(`${this.api}/`);
  }

  signinFor(destination: string): string {
    return `${this.auth}/signin?callbackUrl=${encodeURIComponent(destination)}`;
  }
}
