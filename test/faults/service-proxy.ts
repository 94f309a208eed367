/**
 * A stand-in for a Kubernetes Service in front of broker replicas: a TCP proxy that sends each new
 * connection to the first backend that accepts it. Killing the replica a client is connected to
 * closes the client's connection, and its reconnect lands on the next live replica — what a
 * Service does once the killed pod's endpoint is gone.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface ServiceProxy {
  url: string;
  /** Connections made so far, per backend port. */
  connections: Map<number, number>;
  close(): Promise<void>;
}

export async function startServiceProxy(backends: () => number[]): Promise<ServiceProxy> {
  const connections = new Map<number, number>();
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.pause();
    const tryNext = (ports: number[]) => {
      const [port, ...rest] = ports;
      if (port === undefined) return client.destroy();
      const upstream = connect(port, '127.0.0.1');
      upstream.once('error', () => tryNext(rest));
      upstream.once('connect', () => {
        connections.set(port, (connections.get(port) ?? 0) + 1);
        upstream.removeAllListeners('error');
        open.add(upstream);
        upstream.on('close', () => {
          open.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    tryNext(backends());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
