import net from 'node:net';

/**
 * A TCP proxy a test can cut and restore, to take a dependency away from one process only
 * (the shared Postgres keeps serving everything else).
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  /** While set, what the target answers is dropped (requests still reach it): replies lost on the way. */
  private muted = false;
  /** What clients sent while muted (latin1), to tell what was asked while the answers were lost. */
  private askedWhileMuted = '';

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const probe = net.createServer();
    const port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)));
    await new Promise((r) => probe.close(r));
    const proxy = new TcpProxy(port, target);
    await proxy.restore();
    return proxy;
  }

  /** Accepts connections again. */
  async restore(): Promise<void> {
    if (this.server) return;
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.on('data', (chunk: Buffer) => {
        if (this.muted) this.askedWhileMuted += chunk.toString('latin1');
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!this.muted) client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
  }

  /** From now on the target's answers are dropped: requests run there, their replies never arrive. */
  mute(): void {
    this.muted = true;
    this.askedWhileMuted = '';
  }

  /** How many times `text` was sent to the target since mute(). */
  timesAsked(text: string): number {
    return this.askedWhileMuted.split(text).length - 1;
  }

  /** Drops every open connection (whose replies were lost) and passes everything again. */
  async reconnect(): Promise<void> {
    await this.cut();
    this.muted = false;
    await this.restore();
  }

  /** Drops every open connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise((r) => server.close(r));
  }
}
