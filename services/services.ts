/**
 * The process types, each started on its own by `npm run start:<name>` (its dist entry), by
 * docker-compose and by Kubernetes; `npm start` runs them all.
 */
export const SERVICES: Array<{ name: string; entry: string }> = [
  { name: 'gateway', entry: 'gateway/main.js' },
  { name: 'smart-link-worker', entry: 'smart-link-worker/main.js' },
  { name: 'extraction-worker', entry: 'extraction-worker/main.js' },
  { name: 'mail-worker', entry: 'mail-worker/main.js' },
];
