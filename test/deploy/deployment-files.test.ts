import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_SETTINGS, loadConfig } from '../../shared/config/config';
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
  stop_grace_period?: string;
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

/**
 * A process's shutdown (its SHUTDOWN_TIMEOUT_MS, after any preStop hook) must end before it is
 * killed at the grace period, and use most of it: a grace period is sized for what the
 * process needs to drain, so more than 10 s of it left over means the process gives up early.
 */
const fitsGrace = (shutdownMs: number, graceMs: number) => shutdownMs < graceMs && graceMs - shutdownMs <= 10_000;

describe('docker-compose.yml', () => {
  it('runs postgres, redis (AOF fsynced on every write, noeviction), mailpit, the migration, the gateway and each worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['extraction-worker', 'gateway', 'inbound-mail', 'mail-worker', 'mailpit', 'migrate', 'postgres', 'redis', 'smart-link-worker', 'webhook-worker'].sort(),
    );
    const redis = compose.services.redis.command?.join(' ') ?? '';
    expect(redis).toContain('--appendonly yes');
    // A 202 means the job is on disk (infra/README.md): fsync before Redis answers.
    expect(redis).toContain('--appendfsync always');
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

  it('gives each process a shutdown timeout a few seconds under its stop grace period', () => {
    for (const [name, s] of appServices) {
      if (name === 'migrate') continue;
      // `${SHUTDOWN_TIMEOUT_MS:-10000}`: the value used when the variable is not set.
      const setting = /^\$\{[A-Z_]+:-(\d+)\}$/.exec(s.environment?.SHUTDOWN_TIMEOUT_MS ?? '')?.[1] ?? s.environment?.SHUTDOWN_TIMEOUT_MS;
      const timeoutMs = loadConfig(setting === undefined ? {} : { SHUTDOWN_TIMEOUT_MS: setting }).shutdownTimeoutMs;
      // Compose waits 10 s by default before it kills a container.
      const grace = /^(\d+)s$/.exec(s.stop_grace_period ?? '10s')?.[1];
      expect({ name, grace }).toEqual({ name, grace: expect.stringMatching(/^\d+$/) });
      expect({ name, timeoutMs, grace, fits: fitsGrace(timeoutMs, Number(grace) * 1000) }).toEqual({ name, timeoutMs, grace, fits: true });
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

/** What `kubectl apply -k dir` applies: kustomize renders it offline, patches and all. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests of every kind
function render(dir: string): Array<Record<string, any>> {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', path.join(ROOT, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    throw new Error(e.code === 'ENOENT' ? 'kubectl is not on PATH: install it (its `kustomize` renders infra/ offline)' : `kubectl kustomize ${dir}: ${e.stderr || e.message}`, { cause: err });
  }
  return parseAllDocuments(out).map((d) => d.toJS());
}

/** How long a container's preStop hook holds its SIGTERM back: a sleep, or nothing. */
function preStopMs(container: { name: string; lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: { command: string[] } } } }): number {
  const preStop = container.lifecycle?.preStop;
  if (!preStop) return 0;
  if (preStop.sleep) return Number(preStop.sleep.seconds) * 1000;
  const seconds = /\bsleep\s+(\d+(?:\.\d+)?)\b/.exec(preStop.exec?.command.join(' ') ?? '')?.[1];
  if (seconds === undefined) throw new Error(`${container.name}: cannot tell how long its preStop hook takes (${JSON.stringify(preStop)}); teach preStopMs`);
  return Number(seconds) * 1000;
}

describe('infra/k8s', () => {
  const docs = render('infra/k8s');
  const overlays = { 'infra/k8s': docs, 'infra/keda': render('infra/keda') };

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
  });

  it('migrates in every pod before its process starts, from the same image and settings, and has no Job', () => {
    for (const [dir, rendered] of Object.entries(overlays)) {
      // A Job's pod template cannot change: the next release's image would be refused.
      expect({ dir, jobs: rendered.filter((d) => d.kind === 'Job' || d.kind === 'CronJob').map((d) => d.metadata.name) }).toEqual({ dir, jobs: [] });
      const deployments = rendered.filter((d) => d.kind === 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(SERVICES.map((s) => s.name).sort());
      for (const deployment of deployments) {
        const pod = deployment.spec.template.spec;
        const [container] = pod.containers;
        const inits = (pod.initContainers ?? []) as Array<{ name: string; image: string; command: string[]; envFrom: unknown }>;
        expect({ dir, deployment: deployment.metadata.name, inits: inits.map((c) => c.name) }).toEqual({ dir, deployment: deployment.metadata.name, inits: ['migrate'] });
        const [migrate] = inits;
        expect(pkg.scripts.migrate).toMatch(new RegExp(`node ${argsOf(migrate.command)}$`));
        // The schema of the code in this pod, in the database this pod uses.
        expect(migrate.image).toBe(container.image);
        expect(migrate.envFrom).toEqual(container.envFrom);
      }
    }
  });

  it('lets every process finish its shutdown (after any preStop hook) a few seconds inside its grace period', () => {
    const configMap = (name: string) => docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === name);
    for (const [dir, rendered] of Object.entries(overlays)) {
      for (const deployment of rendered.filter((d) => d.kind === 'Deployment')) {
        const name = deployment.metadata.name as string;
        const pod = deployment.spec.template.spec;
        const [container] = pod.containers;
        // An `env` entry wins over the ConfigMaps of `envFrom`; without either, the default.
        const fromEnv = (container.env ?? []).find((e: { name: string }) => e.name === 'SHUTDOWN_TIMEOUT_MS')?.value;
        const fromConfigMap = (container.envFrom ?? [])
          .map((ref: { configMapRef?: { name: string } }) => ref.configMapRef && configMap(ref.configMapRef.name)?.data?.SHUTDOWN_TIMEOUT_MS)
          .find((v: string | undefined) => v !== undefined);
        const setting = fromEnv ?? fromConfigMap;
        const timeoutMs = loadConfig(setting === undefined ? {} : { SHUTDOWN_TIMEOUT_MS: setting }).shutdownTimeoutMs;
        const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
        const used = { dir, name, preStopMs: preStopMs(container), timeoutMs, graceMs };
        // Kubernetes runs preStop, then sends SIGTERM, and kills the pod at the grace period;
        // a process that gives up long before then wastes the time its grace was sized for.
        expect({ ...used, fits: fitsGrace(used.preStopMs + timeoutMs, graceMs) }).toEqual({ ...used, fits: true });
      }
    }
  });

  it('lets the gateway leave the Service before SIGTERM, with time to drain after it', () => {
    const pod = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'gateway')?.spec.template.spec;
    const preStop = pod.containers[0].lifecycle?.preStop?.exec?.command as string[] | undefined;
    expect(preStop?.[0]).toBe('sleep'); // node:*-slim images have it
    const preStopSeconds = Number(preStop?.[1]);
    expect(preStopSeconds).toBeGreaterThan(0);
    const shutdownSeconds = Number(docs.find((d) => d.kind === 'ConfigMap')?.data.SHUTDOWN_TIMEOUT_MS) / 1000;
    expect(shutdownSeconds).toBeGreaterThan(0);
    // The kubelet counts the preStop hook against the grace period.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStopSeconds + shutdownSeconds + 5);
  });

  it('sets only settings the services read', () => {
    const keys = docs.filter((d) => d.kind === 'ConfigMap' || d.kind === 'Secret').flatMap((d) => Object.keys(d.data ?? d.stringData ?? {}));
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((k) => !CONFIG_SETTINGS.includes(k))).toEqual([]);
    // A Redis Cluster hash tag: every queue key in one slot.
    expect(docs.find((d) => d.kind === 'ConfigMap')?.data.QUEUE_PREFIX).toMatch(/^\{[^}]+\}$/);
  });

  it('trusts X-Forwarded-For from exactly the proxies it ships: none, as its gateway Service is reached directly', () => {
    // A proxy in front of the gateway in the manifests (an Ingress, a Gateway API route, a
    // LoadBalancer Service of the gateway) would have to come with the hop count that matches
    // it, or every client would count as that proxy; without one, trusting a hop would let
    // clients pick their own address. (inbound-mail's LoadBalancer carries SMTP, not HTTP.)
    const toGateway = (d: (typeof docs)[number]) => d.kind === 'Service' && d.spec?.type === 'LoadBalancer' && d.spec?.selector?.['app.kubernetes.io/component'] === 'gateway';
    const proxies = docs.filter((d) => d.kind === 'Ingress' || d.kind === 'HTTPRoute' || toGateway(d));
    expect(proxies.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([]);
    expect(docs.find((d) => d.kind === 'ConfigMap')?.data.TRUST_PROXY).toBe('');
  });
});

describe('infra/keda', () => {
  const yamlDocs = (dir: string) =>
    fs
      .readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .flatMap((f) => parseAllDocuments(read(`${dir}/${f}`)).map((d) => d.toJS() as Record<string, any>)); // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests of every kind
  const base = render('infra/k8s');
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

describe('the image', () => {
  /** Every .js file under a folder, recursively. */
  const scripts = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? scripts(path.join(dir, e.name)) : e.name.endsWith('.js') ? [path.join(dir, e.name)] : []));
  const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

  it('keeps every package the services load once dev dependencies are pruned', () => {
    // The image runs `npm prune --omit=dev`, which removes what the lockfile marks dev-only.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
    const deps = (JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies;
    const loaded = new Set<string>();
    for (const file of [...scripts(path.join(ROOT, 'dist/services')), ...scripts(path.join(ROOT, 'dist/shared'))]) {
      for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/gu)) {
        if (!specifier.startsWith('.') && !isBuiltin(specifier)) loaded.add(packageOf(specifier));
      }
    }
    expect(loaded.size).toBeGreaterThan(10);
    const missing = [...loaded].filter((name) => !deps[name] || !lock.packages[`node_modules/${name}`] || lock.packages[`node_modules/${name}`].dev);
    expect(missing).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  it('documents every setting', () => {
    const readme = read('docs/configuration.md');
    expect(CONFIG_SETTINGS.filter((key) => !readme.includes(`| \`${key}\``))).toEqual([]);
  });
});
