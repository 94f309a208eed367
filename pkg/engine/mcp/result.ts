/**
 * A tool call's result as the text the model reads: text blocks as they are, structured content as
 * JSON when there is no text, other blocks (images, audio, resources) as a short note of what they
 * were — a chat model cannot take them as a tool result.
 */
import type { WireCallResult } from './session.ts';

/** What the model gets of one result at most (the HTTP tool's cap). */
export const MAX_RESULT_CHARS = 100_000;

function blockText(block: unknown): string {
  if (!block || typeof block !== 'object') return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return `[${b.type} ${typeof b.mimeType === 'string' ? b.mimeType : ''} omitted]`;
    case 'resource_link':
      return `[resource ${String(b.uri ?? '')}${b.name ? ` (${String(b.name)})` : ''}]`;
    case 'resource': {
      const r = (b.resource ?? {}) as Record<string, unknown>;
      return typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')} omitted]`;
    }
    default:
      return `[${String(b.type ?? 'unknown')} block omitted]`;
  }
}

export function resultText(res: WireCallResult): string {
  const parts = Array.isArray(res.content) ? res.content.map(blockText).filter((t) => t !== '') : [];
  let text = parts.join('\n');
  if (!text && res.structuredContent !== undefined) text = JSON.stringify(res.structuredContent);
  return text.length > MAX_RESULT_CHARS ? text.slice(0, MAX_RESULT_CHARS) : text;
}
