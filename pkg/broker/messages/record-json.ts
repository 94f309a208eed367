/**
 * The JSON of a stored message record, `{"sequence":N,"timestamp":…,"conversation_id":…,
 * "query_id":…,"message":…}`, built the same way by every backend. What a POST's messages share
 * (time, conversation, query) is serialised once per POST, so each message costs one
 * `JSON.stringify` of its own body and nothing more (a record object per message and its
 * serialisation were a visible share of a batched write).
 */
export function recordTail(timestamp: string, conversationId: string, queryId: string) {
  const head = `"timestamp":${JSON.stringify(timestamp)},"conversation_id":${JSON.stringify(conversationId)},"query_id":${JSON.stringify(queryId)},"message":`;
  /** `"timestamp":…,"message":<message>}`: the record after `{"sequence":N,`. */
  return (message: unknown): string => `${head}${JSON.stringify(message)}}`;
}

/** The whole record from its sequence and its tail. */
export const recordJson = (seq: number, tail: string): string => `{"sequence":${seq},${tail}`;
