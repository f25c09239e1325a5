import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SECRET_SETTING_NAMES } from '../../src/config/setting-names';
import { KubeObject, schemaProblems } from './kubernetes-schema';
import { renderKustomization } from './kustomize';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type {
  IConfigMap,
  IContainer,
  INamespace,
  IPersistentVolumeClaim,
  IPodSpec,
  ISecret,
  IService,
} from 'kubernetes-models/v1';

/** Settings that must only ever come from a Secret: those the settings schema flags as secret. */
const secretSettings: readonly string[] = SECRET_SETTING_NAMES;
/** The longest a SIGTERM'd bridge may spend on requests in flight and closing the store, besides the batch. */
const drainAllowanceSec = 10;

interface Rendered {
  objects: KubeObject[];
  deployment: IDeployment;
  pod: IPodSpec;
  container: IContainer;
  settings: Record<string, string>;
  configMap: IConfigMap;
  secret: ISecret;
}

function only<T>(objects: KubeObject[], kind: string): T {
  const found = objects.filter((object) => object.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, the manifests have ${found.length}`);
  return found[0] as unknown as T;
}

const renders = new Map<string, Rendered>();

/** Rendered once per overlay while Jest collects the tests, so each object gets a test of its own. */
function render(overlay: string): Rendered {
  const cached = renders.get(overlay);
  if (cached) return cached;
  const objects = renderKustomization(`overlays/${overlay}`);
  const deployment = only<IDeployment>(objects, 'Deployment');
  const pod = deployment.spec!.template.spec!;
  const configMap = only<IConfigMap>(objects, 'ConfigMap');
  const secret = only<ISecret>(objects, 'Secret');
  const secretValues = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]),
  );
  const rendered = {
    objects,
    deployment,
    pod,
    container: pod.containers.find((container) => container.name === 'bridge')!,
    settings: { ...configMap.data, ...secretValues },
    configMap,
    secret,
  };
  renders.set(overlay, rendered);
  return rendered;
}

describe.each(['single', 'ha'])('k8s/overlays/%s', (overlay) => {
  const { objects, deployment, pod, container, settings, configMap, secret } = render(overlay);

  it.each(objects.map((object) => [`${object.kind} ${object.metadata.name}`, object] as const))(
    '%s matches the Kubernetes schema, with no unknown fields',
    (_name, object) => {
      expect(schemaProblems(object)).toEqual([]);
    },
  );

  it('labels every object with the recommended app.kubernetes.io labels', () => {
    for (const object of objects) {
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'pbx-crm-bridge',
        'app.kubernetes.io/instance': `pbx-crm-bridge-${overlay}`,
        'app.kubernetes.io/part-of': 'pbx-crm-bridge',
        'app.kubernetes.io/managed-by': 'kustomize',
      });
    }
    expect(deployment.spec!.template.metadata!.labels).toMatchObject(deployment.spec!.selector.matchLabels!);
  });

  it('creates the telephony namespace and puts every other object in it', () => {
    const namespace = only<INamespace>(objects, 'Namespace');
    expect(namespace.metadata!.name).toBe('telephony');
    const elsewhere = objects
      .filter((object) => object.kind !== 'Namespace')
      .filter((object) => object.metadata.namespace !== 'telephony')
      .map((object) => `${object.kind} ${object.metadata.name}`);
    expect(elsewhere).toEqual([]);
  });

  it('probes liveness and start-up on /health/live and readiness on /health/ready, on port 3000', () => {
    const port = container.ports!.find((candidate) => candidate.name === 'http')!;
    expect(port.containerPort).toBe(3000);
    expect(container.startupProbe!.httpGet).toMatchObject({ path: '/health/live', port: 'http' });
    expect(container.livenessProbe!.httpGet).toMatchObject({ path: '/health/live', port: 'http' });
    expect(container.readinessProbe!.httpGet).toMatchObject({ path: '/health/ready', port: 'http' });
    expect(settings.PORT ?? '3000').toBe('3000');
  });

  it('runs as a numeric non-root user with a read-only root file system and no privileges', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const id of ['runAsUser', 'runAsGroup', 'fsGroup'] as const) {
      expect(Number.isInteger(pod.securityContext![id])).toBe(true);
      expect(pod.securityContext![id]).toBeGreaterThan(0);
    }
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('gives the bridge writable volumes at /app/data and /tmp', () => {
    const mounts = Object.fromEntries(container.volumeMounts!.map((mount) => [mount.mountPath, mount.name]));
    const volumes = pod.volumes!.map((volume) => volume.name);
    expect(volumes).toEqual(expect.arrayContaining([mounts['/app/data'], mounts['/tmp']]));
    for (const mount of container.volumeMounts!) expect(mount.readOnly).not.toBe(true);
  });

  it('requests and limits CPU and memory', () => {
    expect(Object.keys(container.resources!.requests!).sort()).toEqual(['cpu', 'memory']);
    expect(Object.keys(container.resources!.limits!).sort()).toEqual(['cpu', 'memory']);
  });

  it('waits before SIGTERM and grants a grace period longer than the wait plus the drain', () => {
    // An exec of the image's own sleep works on every Kubernetes version; the sleep action needs 1.30.
    const command = container.lifecycle!.preStop!.exec!.command!;
    expect(command).toEqual(['sleep', expect.stringMatching(/^\d+$/)]);
    const delay = Number(command[1]);
    expect(delay).toBeGreaterThanOrEqual(3);
    // After SIGTERM: readiness false for SHUTDOWN_DELAY_MS, then the batch in flight may take up to one
    // portal timeout before the store can close.
    const setting = (name: 'SHUTDOWN_DELAY_MS' | 'B24_TIMEOUT_MS') =>
      Number(settings[name] ?? new AppConfig()[name]) / 1000;
    const drain = setting('SHUTDOWN_DELAY_MS') + setting('B24_TIMEOUT_MS') + drainAllowanceSec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(delay + drain);
  });

  it('lets Prometheus scrape /metrics on port 3000', () => {
    expect(deployment.spec!.template.metadata!.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '3000',
      'prometheus.io/path': '/metrics',
    });
  });

  it('exposes port 80 to the pods’ port 3000 through a Service selecting them', () => {
    const service = only<IService>(objects, 'Service');
    expect(service.spec!.ports).toEqual([expect.objectContaining({ port: 80, targetPort: 'http' })]);
    expect(deployment.spec!.template.metadata!.labels).toMatchObject(service.spec!.selector!);
  });

  it('takes settings from the generated ConfigMap and secrets from the generated Secret', () => {
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata!.name } },
      { secretRef: { name: secret.metadata!.name } },
    ]);
    const known = Object.keys(new AppConfig());
    expect(Object.keys(settings).filter((name) => !known.includes(name))).toEqual([]);
    expect(Object.keys(configMap.data!).filter((name) => secretSettings.includes(name))).toEqual([]);
    expect(Object.keys(secret.data!).sort()).toEqual(
      expect.arrayContaining(['ADMIN_TOKEN', 'B24_WEBHOOK_URL', 'PBX_TOKENS']),
    );
  });

  it('has a key in the Secret for every secret setting (DATABASE_URL with PostgreSQL only)', () => {
    const expected = secretSettings.filter((name) => overlay === 'ha' || name !== 'DATABASE_URL');
    expect(expected.filter((name) => !(name in secret.data!))).toEqual([]);
  });

  it('starts in production with the example settings once the placeholder secrets are replaced', () => {
    const own = Object.fromEntries(
      Object.entries(settings).map(([name, value]) => [name, value.replace(/replace-with/g, 'own-random')]),
    );
    const config = loadConfig({ ...own, NODE_ENV: 'production' });
    expect(config.sandboxMode).toBe(false);
    expect(config.PBX_TOKENS.length).toBeGreaterThan(0);
  });

  it('refuses to start in production with the placeholder secrets unchanged, naming each', () => {
    expect(() => loadConfig({ ...settings, NODE_ENV: 'production' })).toThrow(
      /(?=.*PBX_TOKENS: still the repository's placeholder)(?=.*ADMIN_TOKEN: still)(?=.*B24_WEBHOOK_URL: still)/s,
    );
  });
});

describe('k8s/overlays/single', () => {
  const { objects, deployment, pod, container, settings } = render('single');

  it('runs one replica, replaced with Recreate so two pods never share the SQLite file', () => {
    expect(deployment.spec!.replicas).toBe(1);
    expect(deployment.spec!.strategy).toEqual({ type: 'Recreate' });
    expect(objects.map((object) => object.kind)).not.toContain('HorizontalPodAutoscaler');
  });

  it('keeps the embedded SQLite store on a PersistentVolumeClaim at /app/data', () => {
    expect(settings.DATABASE_URL).toBeUndefined();
    const mount = container.volumeMounts!.find((candidate) => candidate.mountPath === '/app/data')!;
    const volume = pod.volumes!.find((candidate) => candidate.name === mount.name)!;
    const claim = only<IPersistentVolumeClaim>(objects, 'PersistentVolumeClaim');
    expect(volume.persistentVolumeClaim).toEqual({ claimName: claim.metadata!.name });
    expect(volume.emptyDir).toBeUndefined();
    expect(claim.spec!.accessModes).toEqual(['ReadWriteOnce']);
    expect(claim.spec!.resources!.requests!.storage).toBeDefined();
  });
});

describe('k8s/overlays/ha', () => {
  const { objects, deployment, pod, configMap, settings } = render('ha');
  const podLabels = deployment.spec!.template.metadata!.labels!;

  it('uses PostgreSQL from the Secret', () => {
    expect(settings.DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
    expect(configMap.data!.DATABASE_URL).toBeUndefined();
  });

  it('leaves the replica count to the autoscaler, rolled one at a time without losing capacity', () => {
    // A count in the Deployment would reset the autoscaler's on every apply.
    expect(deployment.spec!.replicas).toBeUndefined();
    expect(deployment.spec!.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
  });

  it('limits voluntary disruptions to one pod', () => {
    const budget = only<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
    expect(budget.spec!.maxUnavailable ?? budget.spec!.minAvailable).toBe(1);
    expect(podLabels).toMatchObject(budget.spec!.selector!.matchLabels!);
  });

  it('scales the Deployment on CPU between the replica count and a ceiling', () => {
    const autoscaler = only<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
    const spec = autoscaler.spec!;
    expect(autoscaler.apiVersion).toBe('autoscaling/v2');
    expect(spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata!.name,
    });
    expect(spec.minReplicas).toBe(3);
    expect(spec.maxReplicas).toBeGreaterThan(spec.minReplicas!);
    expect(spec.metrics).toEqual([
      expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
    ]);
    // The target is a share of the CPU request: it must fire on real load, not at a few dozen millicores.
    const request = String(pod.containers[0].resources!.requests!.cpu);
    const millicores = request.endsWith('m') ? Number(request.slice(0, -1)) : Number(request) * 1000;
    const utilization = spec.metrics![0].resource!.target.averageUtilization!;
    expect((millicores * utilization) / 100).toBeGreaterThanOrEqual(250);
  });

  it('spreads the pods over nodes and zones', () => {
    const antiAffinity = pod.affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution!;
    expect(antiAffinity[0].podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
    expect(podLabels).toMatchObject(antiAffinity[0].podAffinityTerm.labelSelector!.matchLabels!);
    const spread = pod.topologySpreadConstraints!;
    expect(spread.map((constraint) => constraint.topologyKey)).toEqual(['topology.kubernetes.io/zone']);
    expect(podLabels).toMatchObject(spread[0].labelSelector!.matchLabels!);
  });
});

describe('the unknown-field check', () => {
  const deployment = render('single').deployment as unknown as KubeObject & IDeployment;

  it('reports a misspelt field that kubernetes-models alone accepts', () => {
    const misspelt = structuredClone(deployment);
    Object.assign(misspelt.spec!.template.spec!.containers[0], { readinesProbe: {} });
    expect(schemaProblems(misspelt)).toContain(
      'data/spec/template/spec/containers/0/readinesProbe is not a field of the schema',
    );
  });

  it('reports a wrong type', () => {
    const wrong = structuredClone(deployment);
    Object.assign(wrong.spec!, { replicas: 'one' });
    expect(schemaProblems(wrong).join('\n')).toContain('data/spec/replicas must be integer');
  });
});
