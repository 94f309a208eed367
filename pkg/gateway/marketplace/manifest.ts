import { z } from 'zod';
import { HttpError, parseJson } from '../../http/index.ts';
import { FetchFailure } from './fetch-failure.ts';

/**
 * One item of a public marketplace manifest: `name` and `type` are what every consumer needs;
 * everything else (displayName, description, version, …) is passed through as the source wrote it.
 */
export const manifestItemSchema = z.looseObject({
  name: z.string().min(1),
  type: z.string().min(1),
});
export type ManifestItem = z.infer<typeof manifestItemSchema>;

/** `{version, marketplace?, items}`; only `items` decides whether the manifest is usable. */
export const manifestSchema = z.looseObject({
  version: z.unknown().optional(),
  marketplace: z.unknown().optional(),
  items: z.array(manifestItemSchema),
});

/**
 * The items of a manifest body, or a parse_error. The message names what is wrong by position
 * (`items.3.type`) and never quotes the body: what a source sends is not echoed to clients.
 */
export function parseManifest(text: string): ManifestItem[] {
  let doc: unknown;
  try {
    doc = parseJson(text); // a source is not trusted to nest sanely either
  } catch (err) {
    if (err instanceof HttpError) throw new FetchFailure('parse_error', 'the manifest is nested too deep');
    throw new FetchFailure('parse_error', 'the manifest is not valid JSON');
  }
  const parsed = manifestSchema.safeParse(doc);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || 'manifest'}: ${i.message}`)
      .join('; ');
    throw new FetchFailure('parse_error', `the manifest is not a marketplace manifest: ${where}`);
  }
  return parsed.data.items;
}
