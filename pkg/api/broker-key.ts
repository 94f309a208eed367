/**
 * The key a Query's data carries in a broker (chunks `POST /stream/{key}`, events' `queryId`, the
 * memory contract's `query_id`, the purges): the Query's name in its own namespace's broker, and
 * `<namespace>:<name>` in a broker that serves another namespace (the shared broker a namespace
 * without one of its own falls back to). A namespace is a DNS label and a name never holds `:`, so
 * two namespaces' keys in one broker never collide, and a broker's own namespace keeps bare names
 * (what its API, the compat relay and the dashboard ask for: an API instance serves one namespace).
 * A broker with no namespace of its own (`berth up`, a controller run by hand without
 * POD_NAMESPACE or BROKER_NAMESPACE) keys every query by its bare name, as the wire convention has it.
 */
export function brokerQueryKey(namespace: string, name: string, brokerNamespace: string | undefined): string {
  return brokerNamespace === undefined || namespace === brokerNamespace ? name : `${namespace}:${name}`;
}
