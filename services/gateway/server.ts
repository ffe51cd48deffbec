import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningServer {
  server: http.Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
  closeGracefully(): Promise<void>;
}

export interface ListenOptions {
  host?: string;
  /** A request's headers must arrive within this (HTTP_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** The whole request must arrive within this (HTTP_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
}

/**
 * Slow clients must not hold the server: a request whose headers or body do not arrive in
 * time is answered 408 and its connection closed. Node checks pending requests every
 * `connectionsCheckingInterval` (30 s by default, which would stretch a 10 s limit to 40 s),
 * so it is checked at a quarter of the shorter limit. Keep-alive is longer than a typical
 * load balancer's idle timeout.
 */
export async function listen(handler: http.RequestListener, port: number, opts: ListenOptions): Promise<RunningServer> {
  const server = http.createServer(
    {
      headersTimeout: opts.headersTimeoutMs,
      requestTimeout: opts.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(25, Math.floor(Math.min(opts.headersTimeoutMs, opts.requestTimeoutMs) / 4)),
      keepAliveTimeout: 65_000,
    },
    handler,
  );
  server.maxHeadersCount = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, opts.host, () => {
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
