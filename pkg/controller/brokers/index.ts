export { NamespaceBrokers, type NamespaceBrokersOptions, TENANT_BROKER_SERVICE } from './router.ts';
export { NamespaceTokens, namespaceAudience, type ServiceAccountRef } from './tokens.ts';
