/** Who made a request, as the auth middleware established it (`c.get('principal')`). */
export type Principal =
  | { kind: 'anonymous'; name: 'anonymous' }
  | { kind: 'api-key'; name: string; publicKey: string; keyName: string }
  | { kind: 'user'; name: string; subject?: string; groups?: string[]; claims: Record<string, unknown> };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', name: 'anonymous' }) as Principal;

declare module 'hono' {
  interface ContextVariableMap {
    principal: Principal;
  }
}
