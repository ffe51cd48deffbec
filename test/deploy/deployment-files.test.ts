import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_SETTINGS } from '../../shared/config/config';
import { SERVICES } from '../../services/services';
import { ROOT } from '../helpers/processes';

/**
 * docker-compose.yml and infra/k8s cannot run here (no Docker engine, no cluster), so their
 * structure is checked instead: every process they start exists and is the one npm starts,
 * every setting they pass is one the services read, and each long-running process has a
 * health check and a restart policy.
 */
interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
const appServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const entryOf = (command: string[]) => {
  expect(command[0]).toBe('node');
  return command.slice(1).join(' ');
};

describe('docker-compose.yml', () => {
  it('runs postgres, redis (AOF, noeviction), mailpit, the migration, the gateway and each worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['extraction-worker', 'gateway', 'mail-worker', 'mailpit', 'migrate', 'postgres', 'redis', 'smart-link-worker'].sort(),
    );
    const redis = compose.services.redis.command?.join(' ') ?? '';
    expect(redis).toContain('--appendonly yes');
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(compose.services['mail-worker'].environment?.SMTP_URL).toContain('mailpit:1025');
  });

  it('starts every service of `npm start` as its own container, with the npm script of the same name', () => {
    const byName = new Map(appServices);
    for (const service of SERVICES) {
      const s = byName.get(service.name);
      expect(s).toBeDefined();
      const entry = entryOf(s?.command ?? []);
      expect(entry).toBe(`dist/services/${service.entry}`);
      expect(fs.existsSync(path.join(ROOT, 'services', service.entry.replace(/\.js$/, '.ts')))).toBe(true);
      expect(pkg.scripts[`start:${service.name}`]).toContain(`node ${entry}`);
    }
    expect(pkg.scripts.migrate).toContain(`node ${entryOf(compose.services.migrate.command ?? [])}`);
  });

  it('passes only settings the services read', () => {
    for (const [name, s] of appServices) {
      const unknown = Object.keys(s.environment ?? {}).filter((key) => !CONFIG_SETTINGS.includes(key));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
  });

  it('gives every long-running service a health check and a restart policy', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      if (name === 'migrate') {
        expect(s.restart).toBe('no');
        continue;
      }
      expect({ name, restart: s.restart }).toEqual({ name, restart: 'unless-stopped' });
      expect({ name, health: s.healthcheck?.disable !== true && (s.healthcheck?.test?.length ?? 0) > 0 }).toEqual({ name, health: true });
    }
    for (const [name, s] of appServices) {
      if (name !== 'migrate') expect(s.healthcheck?.test?.join(' ')).toContain('/readyz');
    }
  });
});

describe('infra/k8s', () => {
  const docs = fs
    .readdirSync(path.join(ROOT, 'infra/k8s'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(read(`infra/k8s/${f}`)).map((d) => d.toJS() as Record<string, any>)); // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests of every kind

  it('has a Deployment with probes, an HPA and a PDB for the gateway and each worker', () => {
    for (const service of SERVICES) {
      const deployment = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === service.name);
      expect(deployment).toBeDefined();
      const container = deployment?.spec.template.spec.containers[0];
      expect(container.command).toEqual(['node', `dist/services/${service.entry}`]);
      expect(container.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container.livenessProbe.httpGet.path).toBe('/healthz');
      for (const kind of ['HorizontalPodAutoscaler', 'PodDisruptionBudget']) expect(docs.some((d) => d.kind === kind && d.metadata.name === service.name)).toBe(true);
    }
    expect(docs.some((d) => d.kind === 'Service' && d.metadata.name === 'gateway')).toBe(true);
    expect(docs.some((d) => d.kind === 'Job')).toBe(true);
  });

  it('sets only settings the services read', () => {
    const keys = docs.filter((d) => d.kind === 'ConfigMap' || d.kind === 'Secret').flatMap((d) => Object.keys(d.data ?? d.stringData ?? {}));
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((k) => !CONFIG_SETTINGS.includes(k))).toEqual([]);
    // A Redis Cluster hash tag: every queue key in one slot.
    expect(docs.find((d) => d.kind === 'ConfigMap')?.data.QUEUE_PREFIX).toMatch(/^\{[^}]+\}$/);
  });
});

describe('README', () => {
  it('documents every setting', () => {
    const readme = read('README.md');
    expect(CONFIG_SETTINGS.filter((key) => !readme.includes(`| \`${key}\``))).toEqual([]);
  });
});
