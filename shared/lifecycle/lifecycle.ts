import type { Logger } from '../logging/logger';

type Closer = { name: string; close: () => Promise<void> | void };

/**
 * Ordered, idempotent shutdown. Resources register as they open; shutdown closes them in
 * reverse order (the HTTP server before the pools it uses) and a timer force-exits if a
 * step hangs.
 */
export class Lifecycle {
  private readonly closers: Closer[] = [];
  private shuttingDown: Promise<void> | null = null;
  private deadline = Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  onShutdown(name: string, close: Closer['close']): void {
    this.closers.push({ name, close });
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown !== null;
  }

  /** Time left before a shutdown under way is forced (the whole timeout before one starts). */
  remainingMs(): number {
    return Number.isFinite(this.deadline) ? Math.max(0, this.deadline - Date.now()) : this.timeoutMs;
  }

  shutdown(reason: string): Promise<void> {
    if (!this.shuttingDown) this.shuttingDown = this.run(reason);
    return this.shuttingDown;
  }

  /** SIGTERM/SIGINT: shut down, then exit (0 when every step closed cleanly). */
  installSignalHandlers(): void {
    const handle = (signal: NodeJS.Signals) => {
      this.shutdown(signal).then(
        () => process.exit(process.exitCode ?? 0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', handle);
    process.once('SIGINT', handle);
  }

  private async run(reason: string): Promise<void> {
    this.logger.info({ reason }, 'shutting down');
    this.deadline = Date.now() + this.timeoutMs;
    const timer = setTimeout(() => {
      this.logger.error({ timeoutMs: this.timeoutMs }, 'shutdown timed out; forcing exit');
      process.exit(1);
    }, this.timeoutMs);
    timer.unref();
    let failed = false;
    for (const { name, close } of [...this.closers].reverse()) {
      try {
        await close();
        this.logger.debug({ step: name }, 'closed');
      } catch (err) {
        failed = true;
        this.logger.error({ err, step: name }, 'shutdown step failed');
      }
    }
    clearTimeout(timer);
    if (failed) process.exitCode = 1;
    this.logger.info('shutdown complete');
  }
}
