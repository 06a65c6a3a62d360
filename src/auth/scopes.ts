/**
 * What a key may do (design/API.md "API keys over HTTP"): a `full` key everything, a `read` key
 * only what changes nothing. The one place that says which operation needs which scope: the auth
 * hook refuses with it (src/auth/hook.ts) and the OpenAPI document states it per operation
 * (src/openapi/operation.ts), so the two cannot disagree.
 */
export const SCOPES = ['full', 'read'] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (s: unknown): s is Scope => typeof s === 'string' && (SCOPES as readonly string[]).includes(s);

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope an operation needs, where it differs from its method's: `read` for a POST that
     * writes nothing (the alert preview, the extraction dry run), `full` for a GET that only
     * full keys may make (the keys themselves). Without it: GET and HEAD `read`, the rest `full`.
     */
    scope?: Scope;
    /** The API key operations: only full keys manage keys, and a read key is told so in those words. */
    managesKeys?: boolean;
  }
}

/** The scope an operation needs: its own `config.scope`, else by its method. */
export function requiredScope(method: string, config: { scope?: Scope | undefined } | undefined): Scope {
  if (config?.scope) return config.scope;
  return method === 'GET' || method === 'HEAD' ? 'read' : 'full';
}

/** A full key may do everything a read key may, and more. */
export const permits = (have: Scope, need: Scope): boolean => have === 'full' || need === 'read';
