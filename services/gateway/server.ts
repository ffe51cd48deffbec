import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface DrainOptions {
  /** Connections still open this long after the drain began are cut (so later shutdown steps still run). */
  forceAfterMs?: number;
  /** Called just before connections are cut at `forceAfterMs`. */
  onForce?: () => void;
}

interface RunningServer {
  server: http.Server;
  port: number;
  /**
   * Stops accepting and drains: in-flight requests finish, every response from now on says
   * `Connection: close`, and keep-alive sockets are closed as soon as they are idle.
   */
  closeGracefully(opts?: DrainOptions): Promise<void>;
}

interface ListenOptions {
  host?: string;
  /** A request's headers must arrive within this (HTTP_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** The whole request must arrive within this (HTTP_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
}

/** How often idle keep-alive sockets are closed while draining. */
const IDLE_SWEEP_MS = 50;

/**
 * Slow clients must not hold the server: a request whose headers or body do not arrive in
 * time is answered 408 and its connection closed. Node checks pending requests every
 * `connectionsCheckingInterval` (30 s by default, which would stretch a 10 s limit to 40 s),
 * so it is checked at a quarter of the shorter limit. Keep-alive is longer than a typical
 * load balancer's idle timeout.
 */
export async function listen(handler: http.RequestListener, port: number, opts: ListenOptions): Promise<RunningServer> {
  let draining = false;
  const server = http.createServer(
    {
      headersTimeout: opts.headersTimeoutMs,
      requestTimeout: opts.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(25, Math.floor(Math.min(opts.headersTimeoutMs, opts.requestTimeoutMs) / 4)),
      keepAliveTimeout: 65_000,
    },
    // One flag test per request, nothing more on the hot path: answers that were already
    // under way when the drain began keep their socket alive, and the sweep below closes it
    // as soon as they are done.
    (req, res) => {
      if (draining) res.setHeader('Connection', 'close');
      handler(req, res);
    },
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
    closeGracefully: (drain = {}) =>
      new Promise<void>((resolve, reject) => {
        draining = true;
        // server.close() closes the sockets idle at this moment only. A keep-alive client
        // whose answer left before the drain began would otherwise keep its socket (and the
        // server open) until the keep-alive timeout, sending more requests on it meanwhile.
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        const force =
          drain.forceAfterMs === undefined
            ? undefined
            : setTimeout(() => {
                drain.onForce?.();
                server.closeAllConnections();
              }, drain.forceAfterMs);
        server.close((err) => {
          clearInterval(sweep);
          clearTimeout(force);
          if (err) reject(err);
          else resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
