/** API group, version and the well-known keys every Berth component agrees on. */
export const GROUP = 'berth.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const ANNOTATION_STREAMING = `${GROUP}/streaming-enabled`;
export const QUERY_FINALIZER = `${GROUP}/query-cleanup`;
export const API_KEY_SECRET_TYPE = `${GROUP}/api-key`;
export const DEFAULT_MEMORY_NAME = 'default';
export const DEFAULT_MODEL_NAME = 'default';
