/**
 * The benchmark's MCP servers in a process of their own (so their CPU is not the client's): the
 * 2026-07-28 and 2025-11-25 fixture servers of test/fixtures/mcp. Prints `{"modern": url, "legacy": url}`
 * as one line and serves until stdin closes.
 */
import { startLegacyMcpServer } from '../../fixtures/mcp/legacy-server.ts';
import { startModernMcpServer } from '../../fixtures/mcp/modern-server.ts';

const [modern, legacy] = await Promise.all([startModernMcpServer(), startLegacyMcpServer()]);
console.log(JSON.stringify({ modern: modern.url, legacy: legacy.url }));
process.stdin.resume();
process.stdin.on('end', async () => {
  await Promise.all([modern.close(), legacy.close()]);
  process.exit(0);
});
