/**
 * The process types, each started on its own by `npm run start:<name>` (its dist entry), by
 * docker-compose and by Kubernetes; `npm start` runs them all. `nodeFlags` go before the
 * entry wherever the process is started (package.json, docker-compose.yml, infra/k8s,
 * `npm start`, the benchmarks; test/deploy checks they agree).
 */
interface ServiceSpec {
  name: string;
  entry: string;
  nodeFlags: string[];
}

export const SERVICES: ServiceSpec[] = [
  // A larger young generation: the gateway makes many short-lived objects per request, and
  // fewer scavenges raise submissions/s and lower p99 at /s/{key} (`npm run bench -- ingest`;
  // 64 MB doubles the young generation for little more). The old generation is collected
  // once it doubles since the last full collection, instead of letting it grow up to four
  // times: under load, requests promoted while in flight otherwise pile up as garbage
  // (docs/operations.md, "Gateway memory").
  { name: 'gateway', entry: 'gateway/main.js', nodeFlags: ['--max-semi-space-size=32', '--heap-growing-percent=100'] },
  { name: 'smart-link-worker', entry: 'smart-link-worker/main.js', nodeFlags: [] },
  { name: 'extraction-worker', entry: 'extraction-worker/main.js', nodeFlags: [] },
  { name: 'mail-worker', entry: 'mail-worker/main.js', nodeFlags: [] },
  { name: 'webhook-worker', entry: 'webhook-worker/main.js', nodeFlags: [] },
  { name: 'inbound-mail', entry: 'inbound-mail/main.js', nodeFlags: [] },
];

/** The process's command line after `node`: its flags, then its entry (relative to the project). */
export const serviceArgs = (s: ServiceSpec): string[] => [...s.nodeFlags, `dist/services/${s.entry}`];

export function service(name: string): ServiceSpec {
  const found = SERVICES.find((s) => s.name === name);
  if (!found) throw new Error(`unknown service "${name}"`);
  return found;
}
