import type { Identity } from '../kube/client/types.ts';

/**
 * Who made a request, as the auth middleware established it (`c.get('principal')`). `actsAs` is the
 * Kubernetes user the API impersonates for this caller where it acts as the caller (the marketplace):
 * a JWT's mapped username and groups, an API key's recorded creator. Absent for a token without a
 * usable username claim, and for a key whose creator was anonymous (made in `open` mode).
 */
export type Principal =
  | { kind: 'anonymous'; name: 'anonymous' }
  | { kind: 'api-key'; name: string; publicKey: string; keyName: string; actsAs?: Identity }
  | {
      kind: 'user';
      name: string;
      subject?: string;
      groups?: string[];
      claims: Record<string, unknown>;
      actsAs?: Identity;
    };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', name: 'anonymous' }) as Principal;

/** What the auth middleware sets on its app's context, for the routes that act on the caller's behalf. */
export type PrincipalVariables = {
  principal: Principal;
};
