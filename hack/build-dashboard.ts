import { buildBundle } from '../pkg/dashboard/ui/bundle.ts';

/** `npm run build`: the dashboard UI bundled (esbuild) into pkg/dashboard/ui/static/app/, then copied to dist/. */
const files = await buildBundle();
console.log(`dashboard UI: ${files.join(', ')}`);
