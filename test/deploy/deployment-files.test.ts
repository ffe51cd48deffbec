import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_SETTINGS } from '../../shared/config/config';
import { METRIC } from '../../shared/metrics/metrics';
import { QUEUES } from '../../shared/queues/queues';
import { SERVICES, service as serviceNamed, serviceArgs } from '../../services/services';
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
/** What a command runs after `node` (its flags and entry), as one string. */
const argsOf = (command: string[]) => {
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
      // The same flags and entry as npm start and the npm script.
      const args = argsOf(s?.command ?? []);
      expect(args).toBe(serviceArgs(service).join(' '));
      expect(fs.existsSync(path.join(ROOT, 'services', service.entry.replace(/\.js$/, '.ts')))).toBe(true);
      expect(pkg.scripts[`start:${service.name}`]).toMatch(new RegExp(`node ${args}$`));
    }
    expect(pkg.scripts.migrate).toContain(`node ${argsOf(compose.services.migrate.command ?? [])}`);
    // The image's default command is the gateway's.
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', ...serviceArgs(serviceNamed('gateway'))]);
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
      expect(container.command).toEqual(['node', ...serviceArgs(service)]);
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

describe('infra/keda', () => {
  const yamlDocs = (dir: string) =>
    fs
      .readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .flatMap((f) => parseAllDocuments(read(`${dir}/${f}`)).map((d) => d.toJS() as Record<string, any>)); // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests of every kind
  const base = yamlDocs('infra/k8s');
  const scaled = yamlDocs('infra/keda').filter((d) => d.kind === 'ScaledObject');
  const kustomization = parse(read('infra/keda/kustomization.yaml')) as { resources: string[]; patches: Array<{ patch: string }> };

  it('scales workers of the base on their queue backlog, each replacing that worker\'s CPU HPA', () => {
    expect(kustomization.resources).toEqual(['../k8s', 'scaled-objects.yaml']);
    const deleted = kustomization.patches.map((p) => parse(p.patch)).map((p) => {
      expect(p).toMatchObject({ $patch: 'delete', kind: 'HorizontalPodAutoscaler' });
      return p.metadata.name as string;
    });
    expect(scaled.map((s) => s.metadata.name).sort()).toEqual(deleted.sort());
    expect(scaled.length).toBeGreaterThan(0);
    for (const so of scaled) {
      const name = so.metadata.name as string;
      expect(so.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name });
      const hpa = base.find((d) => d.kind === 'HorizontalPodAutoscaler' && d.metadata.name === name);
      expect({ name, min: so.spec.minReplicaCount, max: so.spec.maxReplicaCount }).toEqual({ name, min: hpa?.spec.minReplicas, max: hpa?.spec.maxReplicas });
      // The backlog query reads the service's own gauge, for a queue that exists.
      const backlog = so.spec.triggers.find((t: { type: string }) => t.type === 'prometheus');
      const queue = new RegExp(`^sum\\(max by \\(state\\) \\(${METRIC.queueJobs}\\{queue="([^"]+)",`).exec(backlog?.metadata.query)?.[1];
      expect(Object.values(QUEUES)).toContain(queue);
      expect(Number(backlog.metadata.threshold)).toBeGreaterThan(0);
      // The CPU trigger needs CPU requests on the pods.
      expect(so.spec.triggers.some((t: { type: string }) => t.type === 'cpu')).toBe(true);
      const deployment = base.find((d) => d.kind === 'Deployment' && d.metadata.name === name);
      expect(deployment?.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
    }
  });
});

describe('README', () => {
  it('documents every setting', () => {
    const readme = read('README.md');
    expect(CONFIG_SETTINGS.filter((key) => !readme.includes(`| \`${key}\``))).toEqual([]);
  });
});
