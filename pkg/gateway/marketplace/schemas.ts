import { z } from 'zod';
import { SOURCE_ERROR_CODES } from './fetch-failure.ts';

/**
 * The marketplace's shapes: the stored value of one `marketplace-sources` key, the API's views and
 * bodies. `name` and `url` are plain strings here and checked by the handlers, because the spec
 * makes a bad URL (and, by the issue, a bad name) a 422 while a body that is not the shape at all
 * is the validation hook's 400.
 */

export const authScheme = z.enum(['bearer', 'basic']);

/** The value of one ConfigMap data key (JSON): what the seeder and this API both write. */
export const storedSourceSchema = z.object({
  url: z.string().min(1),
  displayName: z.string().optional(),
  auth: z.object({ scheme: authScheme, secretRef: z.string().min(1) }).optional(),
});
export type StoredSource = z.infer<typeof storedSourceSchema>;

export const sourceView = z
  .object({
    name: z.string(),
    url: z.string(),
    displayName: z.string().describe('Label in the dashboard; the source name when none was given'),
    auth: z
      .object({
        scheme: authScheme,
        secretRef: z.string().describe('Name of the Secret holding the credential (key `value`)'),
      })
      .optional()
      .describe('Present for a private source; the credential itself is never returned'),
  })
  .meta({ id: 'MarketplaceSource' });
export type SourceView = z.infer<typeof sourceView>;

const credentialAuth = z.strictObject({
  scheme: authScheme,
  credential: z
    .string()
    .min(1, 'credential must not be empty')
    .max(16_384)
    .describe('Token or password; written to Secret marketplace-source-<name>-auth, never returned'),
});

const displayName = z.string().max(256).optional();

export const createSourceBody = z
  .strictObject({
    name: z
      .string()
      .min(1, 'name must not be empty')
      .describe('Source name: a ConfigMap key (letters, digits, "-", "_", ".")'),
    url: z.string().min(1, 'url must not be empty').describe('Absolute https URL of the manifest'),
    displayName,
    auth: credentialAuth.optional(),
  })
  .meta({ id: 'MarketplaceSourceCreate' });
export type CreateSourceBody = z.infer<typeof createSourceBody>;

export const patchSourceBody = z
  .strictObject({
    url: z.string().min(1, 'url must not be empty').optional(),
    displayName,
    auth: credentialAuth
      .nullable()
      .optional()
      .describe('A new credential (test-fetched before saving), or null to make the source public'),
  })
  .meta({ id: 'MarketplaceSourcePatch' });
export type PatchSourceBody = z.infer<typeof patchSourceBody>;

export const sourceList = z.object({ items: z.array(sourceView) }).meta({ id: 'MarketplaceSourceList' });

export const permissionsView = z
  .object({
    canEdit: z
      .boolean()
      .describe('true only when every right of rule 8 is granted to the caller; false on any error'),
  })
  .meta({ id: 'MarketplacePermissions' });

const sourceError = z.object({ code: z.enum(SOURCE_ERROR_CODES), message: z.string() });

export const itemsView = z
  .object({
    items: z.array(
      z
        .looseObject({ name: z.string(), type: z.string(), source: z.string().describe('Source name') })
        .describe('A manifest item as the source wrote it, plus the name of its source'),
    ),
    sources: z.array(
      z.object({
        name: z.string(),
        displayName: z.string(),
        url: z.string(),
        itemCount: z.number().int(),
        error: sourceError.optional(),
      }),
    ),
  })
  .meta({ id: 'MarketplaceItems' });
export type ItemsView = z.infer<typeof itemsView>;
