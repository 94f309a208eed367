/** Polls `fn` until it returns true (no fixed sleeps); fails after `ms`. */
export async function eventually(fn: () => boolean | Promise<boolean>, ms = 5000, every = 10): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, every));
  }
}
