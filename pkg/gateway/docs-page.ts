import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AnyOpenAPIHono } from './openapi-route.ts';

const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
]);

/** Interactive docs served from the installed swagger-ui-dist (no CDN: works offline and air-gapped). */
export function mountDocsPage(app: AnyOpenAPIHono, path: string, specUrl: string, title: string) {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  app.get(`${path}/assets/:file`, async (c) => {
    const file = c.req.param('file');
    const type = ASSETS.get(file);
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      body = await readFile(join(dir, file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=86400',
    });
  });
  app.get(path, (c) =>
    c.html(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>
<link rel="stylesheet" href="${path}/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="${path}/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#ui' });</script></body></html>`),
  );
}
