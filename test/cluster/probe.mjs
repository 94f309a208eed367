// What a pod of the cluster suite tries from inside the cluster (run as `node --input-type=module -e
// <this file>` in a pod of the berth image; its settings in the PROBE environment variable, JSON).
// It prints one JSON line with what happened and exits 0; the test reads it from the pod's log.
//  - mode "tokens": waits until `base` answers /readyz, then sends every call of `calls` with no
//    token, a forged one, and each token file of `tokenFiles` (the pod's own service-account tokens);
//    answers { "<who>: <METHOD> <path>": status }.
//  - mode "connect": waits until every `control` target accepts a TCP connection (the pod's network
//    works, the policies know the pod), then tries each `targets` and `control` entry `rounds` times;
//    answers { control: { target: [outcome…] } (the wait), refused: { target: [outcome…] },
//    open: { target: [outcome…] } }, an outcome being "connected", "timeout" or the error code
//    (ECONNREFUSED, …). Targets are host:port.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

const cfg = JSON.parse(process.env.PROBE ?? '{}');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tcp(target, timeoutMs = 3000) {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, timeoutMs);
    socket.on('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      resolve(err.code ?? err.message);
    });
  });
}

async function reachable(url, withinMs) {
  const end = Date.now() + withinMs;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.ok) return true;
    } catch {}
    if (Date.now() > end) return false;
    await sleep(300);
  }
}

async function tokens() {
  if (!(await reachable(`${cfg.base}/readyz`, 60_000))) return { error: `${cfg.base} never answered` };
  const creds = [
    ['no token', undefined],
    ['a forged token', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
    ...Object.entries(cfg.tokenFiles).map(([who, path]) => [who, readFileSync(path, 'utf8').trim()]),
  ];
  const out = {};
  for (const [who, token] of creds)
    for (const [method, path, body] of cfg.calls) {
      const res = await fetch(`${cfg.base}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      out[`${who}: ${method} ${path}`] = res.status;
    }
  return out;
}

async function fence() {
  const control = {};
  for (const target of cfg.control) {
    control[target] = [];
    const end = Date.now() + 60_000;
    for (;;) {
      const got = await tcp(target);
      control[target].push(got);
      if (got === 'connected' || Date.now() > end) break;
      await sleep(300);
    }
  }
  const refused = Object.fromEntries(cfg.targets.map((t) => [t, []]));
  const open = Object.fromEntries(cfg.control.map((t) => [t, []]));
  for (let round = 0; round < (cfg.rounds ?? 3); round++) {
    for (const target of cfg.targets) refused[target].push(await tcp(target));
    for (const target of cfg.control) open[target].push(await tcp(target));
  }
  return { control, refused, open };
}

const result = cfg.mode === 'tokens' ? await tokens() : await fence();
console.log(JSON.stringify(result));
