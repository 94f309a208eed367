import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface RawResponse {
  status: number;
  body: string;
  json<T = unknown>(): T;
}

export interface RawRequest {
  method?: string;
  path: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string | string[]>;
  signal?: AbortSignal;
}

// client-node builds one https.Agent per kubeconfig without keep-alive, so every request paid a TLS
// handshake; the controller patches status at hundreds of requests per second, so we keep
// connections open with our own agent built from the same TLS material.
const agents = new WeakMap<KubeConfig, Map<string, HttpAgent>>();

function keepAliveAgent(kc: KubeConfig, opts: RequestOptions, secure: boolean): HttpAgent | undefined {
  if (kc.getCurrentCluster()?.proxyUrl) return undefined; // keep client-node's proxy agent
  const key = JSON.stringify([kc.getCurrentCluster()?.name, kc.getCurrentUser()?.name, secure]);
  const byKey = agents.get(kc) ?? new Map<string, HttpAgent>();
  agents.set(kc, byKey);
  let agent = byKey.get(key);
  if (!agent) {
    const tls = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      servername: opts.servername,
      ...(opts.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: opts.rejectUnauthorized }),
    };
    agent = secure
      ? new HttpsAgent({ ...tls, keepAlive: true, maxFreeSockets: 64, scheduling: 'lifo' })
      : new HttpAgent({ keepAlive: true, maxFreeSockets: 64 });
    byKey.set(key, agent);
  }
  return agent;
}

/** Who Berth is to the API server when a caller does not say which part it is. */
export const DEFAULT_USER_AGENT = 'berth';

/** Request options for one call to the API server: URL, TLS, credentials and a keep-alive agent. */
export async function kubeRequestOptions(
  kc: KubeConfig,
  req: Omit<RawRequest, 'body'>,
): Promise<{ url: URL; opts: RequestOptions }> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const url = new URL(req.path, server);
  const opts: RequestOptions = {
    method: req.method ?? 'GET',
    // Without a User-Agent the API server records the writer of a field as "unknown".
    headers: { 'user-agent': DEFAULT_USER_AGENT, accept: req.accept ?? 'application/json', ...req.headers },
    signal: req.signal,
  };
  await kc.applyToHTTPSOptions(opts);
  const agent = keepAliveAgent(kc, opts, url.protocol === 'https:');
  if (agent) opts.agent = agent;
  return { url, opts };
}

/** Sends a request and hands over the response stream (watches); the caller consumes or destroys it. */
export async function rawStream(kc: KubeConfig, req: RawRequest): Promise<IncomingMessage> {
  const { url, opts } = await kubeRequestOptions(kc, req);
  const payload =
    req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  if (payload !== undefined) {
    const headers = opts.headers as Record<string, string | number>;
    headers['content-type'] = req.contentType ?? 'application/json';
    // Node sends a DELETE body neither chunked nor sized unless told its length: the server would
    // ignore it (preconditions lost) and read it as the start of the next request on the socket.
    headers['content-length'] = Buffer.byteLength(payload);
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const r = send(url, opts, resolve);
    r.on('error', reject);
    r.end(payload);
  });
}

/**
 * A request to the API server as raw JSON. The typed client's serializer drops fields it does not
 * model (e.g. `x-kubernetes-*` keys written with hyphens) and cannot send several Impersonate-Group
 * headers; this path sends exactly what it is given, with the kubeconfig's TLS and credentials.
 */
export async function rawRequest(kc: KubeConfig, req: RawRequest): Promise<RawResponse> {
  const res = await rawStream(kc, req);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      resolve({ status: res.statusCode ?? 0, body, json: <T>() => JSON.parse(body) as T });
    });
    res.on('error', reject);
    res.on('aborted', () => reject(new Error(`${req.method ?? 'GET'} ${req.path}: response aborted`)));
  });
}
