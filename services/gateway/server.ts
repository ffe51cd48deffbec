import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningServer {
  server: http.Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
  closeGracefully(): Promise<void>;
}

/**
 * Slow clients must not hold the server: headers within 10 s, the whole request within
 * 30 s; keep-alive longer than a typical load balancer's idle timeout.
 */
export async function listen(handler: http.RequestListener, port: number, host?: string): Promise<RunningServer> {
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 65_000 }, handler);
  server.maxHeadersCount = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    closeGracefully: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
