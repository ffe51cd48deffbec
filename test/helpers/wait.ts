/**
 * Polls until `probe` returns a value that is not undefined/false, or fails after the
 * timeout. Tests wait for conditions, never for fixed times.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 25);
    });
  }
}
