import { readFileSync } from 'node:fs';

/**
 * The half of `npm ci` that `npm install` lacks: fail when package-lock.json does not match
 * package.json, instead of silently resolving new versions. The image build runs this before its
 * `npm install` (which it uses because `npm ci` refuses a lock without the non-Linux optional
 * binaries this project's registry lacks; see the Makefile).
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const root = lock.packages?.[''] ?? {};
const stale = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'].filter(
  (k) => JSON.stringify(pkg[k] ?? {}) !== JSON.stringify(root[k] ?? {}),
);
if ((lock.lockfileVersion ?? 0) < 2) stale.push('lockfileVersion');
if (stale.length) {
  console.error(`package-lock.json does not match package.json (${stale.join(', ')}): run npm install`);
  process.exit(1);
}
