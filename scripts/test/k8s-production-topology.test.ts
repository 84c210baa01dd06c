import assert from 'node:assert/strict';
import type { Obj, Resource } from '../k8s/resources.ts';
import {
  deploymentTopologyProblems,
  NIGHTLY_REPLICAS,
  natsClusterProblems,
  postgresClusterProblems,
  preStopSeconds,
  selects,
  settingOf,
  type NatsClusterValues,
} from '../k8s/production-topology.ts';

// Fixtures: a production that passes, and the one change each test makes to it.
const NS = 'investment-platform';
const DEFAULT_SHUTDOWN_MS = 10_000;
const labels = { 'app.kubernetes.io/name': 'api', 'app.kubernetes.io/part-of': 'investment-platform' };
const selector = { matchLabels: { 'app.kubernetes.io/name': 'api' } };

const container = (overrides: Obj = {}): Obj => ({
  name: 'api',
  image: 'investment-platform',
  env: [{ name: 'SHUTDOWN_GRACE_MS', value: '10000' }],
  readinessProbe: { httpGet: { path: '/readyz', port: 'http' } },
  lifecycle: { preStop: { sleep: { seconds: 5 } } },
  ...overrides,
});

const spread = (topologyKey: string, whenUnsatisfiable = 'ScheduleAnyway') => ({ maxSkew: 1, topologyKey, whenUnsatisfiable, labelSelector: selector });

const deployment = (pod: Obj = {}, spec: Obj = {}): Resource => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'api', namespace: NS },
  spec: {
    replicas: 3,
    selector,
    template: {
      metadata: { labels },
      spec: {
        terminationGracePeriodSeconds: 30,
        topologySpreadConstraints: [spread('kubernetes.io/hostname'), spread('topology.kubernetes.io/zone')],
        containers: [container()],
        ...pod,
      },
    },
    ...spec,
  },
});

const pdb = (spec: Obj = { maxUnavailable: 1 }, name = 'api'): Resource => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name, namespace: NS },
  spec: { selector, ...spec },
});

const hpa = (spec: Obj = {}): Resource => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'api', namespace: NS },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' },
    minReplicas: 3,
    maxReplicas: 10,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    ...spec,
  },
});

const configMap = (name: string, data: Record<string, string>): Resource => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });

const cluster = (spec: Obj = {}): Resource => ({
  apiVersion: 'postgresql.cnpg.io/v1',
  kind: 'Cluster',
  metadata: { name: 'platform-postgres', namespace: NS },
  spec: { instances: 3, storage: { size: '1Gi' }, postgresql: { synchronous: { method: 'any', number: 1 } }, ...spec },
});

const nats = (cluster: Obj = { enabled: true, replicas: 3 }, jetstream: Obj = { enabled: true }): NatsClusterValues => ({ config: { cluster, jetstream } });

const check = (...objects: Resource[]) => deploymentTopologyProblems(objects, DEFAULT_SHUTDOWN_MS);
/** Asserts exactly one problem, matching `expected`. */
const onlyProblem = (problems: string[], expected: RegExp) => {
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, expected);
};

describe('k8s:check: the production topology', () => {
  it('passes a Deployment with replicas, a budget, spread, an autoscaler, readiness and a shutdown that fits', () => {
    assert.deepEqual(check(deployment(), pdb(), hpa()), []);
    assert.deepEqual(check(deployment(), pdb({ minAvailable: 1 }), hpa()), []);
  });

  it('refuses fewer than two replicas, and an autoscaler that may go below two or scale on no CPU', () => {
    // One replica: said once, not again as a budget that cannot keep a pod and let one go.
    assert.deepEqual(check(deployment({}, { replicas: 1 }), pdb(), hpa()), ['Deployment investment-platform/api: replicas 1 is below 2']);
    // replicas left out means 1.
    onlyProblem(check(deployment({}, { replicas: undefined }), pdb(), hpa()), /replicas 1 is below 2/);
    onlyProblem(check(deployment(), pdb(), hpa({ minReplicas: 1 })), /HorizontalPodAutoscaler api: minReplicas 1 is below 2/);
    // minReplicas left out means 1.
    onlyProblem(check(deployment(), pdb(), hpa({ minReplicas: undefined })), /minReplicas 1 is below 2/);
    onlyProblem(check(deployment(), pdb(), hpa({ maxReplicas: 2 })), /maxReplicas 2 is below minReplicas 3/);
    onlyProblem(check(deployment(), pdb(), hpa({ metrics: [{ type: 'Resource', resource: { name: 'memory' } }] })), /scales on no CPU metric/);
    onlyProblem(check(deployment(), pdb()), /0 HorizontalPodAutoscalers scale it/);
    // An autoscaler of another Deployment, or in another namespace, is not this one's.
    const elsewhere = { ...hpa(), metadata: { name: 'api', namespace: 'other' } };
    onlyProblem(check(deployment(), pdb(), elsewhere, hpa({ scaleTargetRef: { kind: 'Deployment', name: 'web' } })), /0 HorizontalPodAutoscalers/);
  });

  it("refuses an autoscaler of a service that cannot reach the nightly batch's replicas and one more", () => {
    for (const [name, needed] of Object.entries(NIGHTLY_REPLICAS)) {
      const service = { ...deployment(), metadata: { name, namespace: NS } };
      const scaler = (maxReplicas: number) => hpa({ minReplicas: 2, maxReplicas, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name } });
      assert.deepEqual(check(service, pdb(), scaler(needed + 1)), [], name);
      // With one replica needed, a maxReplicas of 1 is also below minReplicas: that problem may come with it.
      const nightly = check(service, pdb(), scaler(needed)).filter((p) => /nightly batch/.test(p));
      assert.equal(nightly.length, 1, name);
      assert.match(nightly[0]!, new RegExp(`maxReplicas ${needed} is below the ${needed} replicas the nightly batch`));
    }
    // A Deployment the figures do not name has no such floor.
    assert.deepEqual(check(deployment(), pdb(), hpa({ minReplicas: 2, maxReplicas: 2 })), []);
  });

  it('requires one disruption budget selecting the pods that lets one pod go and keeps one', () => {
    onlyProblem(check(deployment(), hpa()), /no PodDisruptionBudget selects its pods/);
    onlyProblem(check(deployment(), pdb({ selector: { matchLabels: { 'app.kubernetes.io/name': 'web' } } }), hpa()), /no PodDisruptionBudget/);
    onlyProblem(check(deployment(), pdb(), pdb({ minAvailable: 1 }, 'second'), hpa()), /2 PodDisruptionBudgets select its pods \(api, second\)/);
    for (const [spec, expected] of [
      [{ maxUnavailable: 0 }, /maxUnavailable 0 must let 1 to 2 of 3 pods go/],
      [{ maxUnavailable: 3 }, /maxUnavailable 3 must let 1 to 2 of 3 pods go/],
      [{ minAvailable: 3 }, /minAvailable 3 must keep at least 1 pod and let one go \(below 3\)/],
      [{ minAvailable: '100%' }, /minAvailable 100%/],
      [{ minAvailable: 0 }, /minAvailable 0/],
      [{}, /minAvailable undefined/],
    ] as const)
      onlyProblem(check(deployment(), pdb(spec), hpa()), expected);
  });

  it('requires spread over nodes and over zones (ScheduleAnyway), selecting the pods', () => {
    const without = (key: string) => [spread('kubernetes.io/hostname'), spread('topology.kubernetes.io/zone')].filter((c) => c.topologyKey !== key);
    onlyProblem(check(deployment({ topologySpreadConstraints: without('kubernetes.io/hostname') }), pdb(), hpa()), /over kubernetes\.io\/hostname/);
    onlyProblem(check(deployment({ topologySpreadConstraints: without('topology.kubernetes.io/zone') }), pdb(), hpa()), /over topology\.kubernetes\.io\/zone/);
    const strictZone = [spread('kubernetes.io/hostname'), spread('topology.kubernetes.io/zone', 'DoNotSchedule')];
    onlyProblem(check(deployment({ topologySpreadConstraints: strictZone }), pdb(), hpa()), /zone must be whenUnsatisfiable: ScheduleAnyway/);
    const otherPods = [spread('kubernetes.io/hostname'), { ...spread('topology.kubernetes.io/zone'), labelSelector: { matchLabels: { x: 'y' } } }];
    onlyProblem(check(deployment({ topologySpreadConstraints: otherPods }), pdb(), hpa()), /over topology\.kubernetes\.io\/zone/);
  });

  it('requires readiness on /readyz and a preStop whose duration it can read', () => {
    const with_ = (overrides: Obj) => check(deployment({ containers: [container(overrides)] }), pdb(), hpa());
    onlyProblem(
      with_({ readinessProbe: { httpGet: { path: '/livez', port: 'http' } } }),
      /container api: readinessProbe must be httpGet \/readyz \(is \/livez\)/,
    );
    onlyProblem(with_({ lifecycle: {} }), /container api: no preStop/);
    onlyProblem(with_({ lifecycle: { preStop: { httpGet: { path: '/drain', port: 'http' } } } }), /neither sleep\.seconds nor exec sleep <seconds>/);
    assert.deepEqual(with_({ lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } } }), []);
  });

  it('requires a grace period >= preStop + SHUTDOWN_GRACE_MS + the margin, the setting from env, envFrom or the default', () => {
    const grace = (seconds: number, overrides: Obj = {}, ...more: Resource[]) =>
      check(deployment({ terminationGracePeriodSeconds: seconds, containers: [container(overrides)] }), pdb(), hpa(), ...more);
    // 5 + 10 + 5 = 20.
    assert.deepEqual(grace(20), []);
    onlyProblem(grace(19), /terminationGracePeriodSeconds 19 is below preStop 5 s \+ SHUTDOWN_GRACE_MS 10 s \+ 5 s = 20 s/);
    onlyProblem(grace(20, { lifecycle: { preStop: { sleep: { seconds: 6 } } } }), /preStop 6 s .* = 21 s/);
    // Partial seconds count as whole ones.
    onlyProblem(grace(20, { env: [{ name: 'SHUTDOWN_GRACE_MS', value: '10001' }] }), /SHUTDOWN_GRACE_MS 10\.001 s \+ 5 s = 21 s/);
    // No setting: the services' default.
    assert.deepEqual(grace(20, { env: [] }), []);
    assert.deepEqual(
      deploymentTopologyProblems([deployment({ terminationGracePeriodSeconds: 20, containers: [container({ env: [] })] }), pdb(), hpa()], 20_000).length,
      1,
    );
    // From a ConfigMap of envFrom, in the same namespace; the container's own env wins over it.
    const fromMap = { env: [], envFrom: [{ configMapRef: { name: 'platform-config' } }] };
    onlyProblem(grace(20, fromMap, configMap('platform-config', { SHUTDOWN_GRACE_MS: '30000' })), /SHUTDOWN_GRACE_MS 30 s/);
    assert.deepEqual(
      grace(20, { ...fromMap, env: [{ name: 'SHUTDOWN_GRACE_MS', value: '10000' }] }, configMap('platform-config', { SHUTDOWN_GRACE_MS: '30000' })),
      [],
    );
    onlyProblem(grace(20, { env: [{ name: 'SHUTDOWN_GRACE_MS', value: '10s' }] }), /SHUTDOWN_GRACE_MS 10s is not a whole number of milliseconds/);
    // No terminationGracePeriodSeconds: Kubernetes' 30 s.
    assert.deepEqual(check(deployment({ terminationGracePeriodSeconds: undefined }), pdb(), hpa()), []);
    onlyProblem(
      check(
        deployment({ terminationGracePeriodSeconds: undefined, containers: [container({ lifecycle: { preStop: { sleep: { seconds: 20 } } } })] }),
        pdb(),
        hpa(),
      ),
      /30 is below .* = 35 s/,
    );
  });

  it('refuses a production without a Deployment rather than passing it', () => {
    assert.deepEqual(check(pdb(), hpa()), ['production renders no Deployment']);
  });

  it('reads label selectors with matchLabels and matchExpressions', () => {
    assert.equal(selects({}, labels), true);
    assert.equal(selects(undefined, labels), false);
    assert.equal(selects({ matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['api', 'web'] }] }, labels), true);
    assert.equal(selects({ matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['api'] }] }, labels), false);
    assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels), false);
    assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels), true);
    assert.equal(selects({ matchLabels: { 'app.kubernetes.io/name': 'api' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels), false);
  });

  it('reads a setting from env, then from envFrom ConfigMaps in order, with their prefix', () => {
    const d = deployment();
    const maps = [configMap('a', { X: '1' }), configMap('b', { X: '2', Y: '3' })];
    assert.equal(settingOf({ envFrom: [{ configMapRef: { name: 'a' } }, { configMapRef: { name: 'b' } }] }, d, maps, 'X'), '2');
    assert.equal(settingOf({ envFrom: [{ configMapRef: { name: 'b' }, prefix: 'P_' }] }, d, maps, 'P_Y'), '3');
    assert.equal(settingOf({ env: [{ name: 'X', value: '9' }], envFrom: [{ configMapRef: { name: 'a' } }] }, d, maps, 'X'), '9');
    assert.equal(settingOf({ envFrom: [{ configMapRef: { name: 'missing' } }] }, d, maps, 'X'), undefined);
    assert.equal(preStopSeconds({ lifecycle: { preStop: { exec: { command: ['/bin/sleep', '7'] } } } }), 7);
    assert.equal(preStopSeconds({ lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 5'] } } } }), 'unknown');
  });
});

describe('k8s:check: Postgres and NATS in production', () => {
  it('requires a CloudNativePG Cluster of 3 instances with a synchronous replica, in either form', () => {
    assert.deepEqual(postgresClusterProblems([cluster()]), []);
    assert.deepEqual(postgresClusterProblems([cluster({ postgresql: {}, minSyncReplicas: 1, maxSyncReplicas: 1 })]), []);
    onlyProblem(postgresClusterProblems([cluster({ instances: 2 })]), /instances 2 is below 3/);
    onlyProblem(postgresClusterProblems([cluster({ postgresql: { parameters: {} } })]), /no synchronous replica/);
    onlyProblem(postgresClusterProblems([cluster({ postgresql: {}, minSyncReplicas: 0, maxSyncReplicas: 1 })]), /no synchronous replica/);
    onlyProblem(
      postgresClusterProblems([cluster({ postgresql: {}, minSyncReplicas: 2, maxSyncReplicas: 1 })]),
      /synchronous replicas 2\.\.1 must lie within the 2 replicas/,
    );
    onlyProblem(postgresClusterProblems([cluster({ postgresql: { synchronous: { method: 'any', number: 3 } } })]), /synchronous replicas 3\.\.3/);
    assert.ok(postgresClusterProblems([cluster({ minSyncReplicas: 1, maxSyncReplicas: 1 })]).some((p) => /exclude each other/.test(p)));
    assert.deepEqual(postgresClusterProblems([deployment()]), ['production renders no CloudNativePG Cluster']);
  });

  it('requires 3 clustered JetStream servers', () => {
    assert.deepEqual(natsClusterProblems(nats(), []), []);
    onlyProblem(natsClusterProblems(nats({ enabled: true, replicas: 2 }), []), /config\.cluster\.replicas 2 is below 3 servers/);
    onlyProblem(natsClusterProblems(nats({ enabled: false, replicas: 3 }), []), /config\.cluster\.enabled must be true/);
    onlyProblem(natsClusterProblems(nats(undefined, { enabled: false }), []), /config\.jetstream\.enabled must be true/);
    assert.equal(natsClusterProblems({}, []).length, 2);
  });

  it('holds NATS_STREAM_REPLICAS, where the services set it, between 3 and the servers there are', () => {
    const withReplicas = (value: string) => deployment({ containers: [container({ env: [{ name: 'NATS_STREAM_REPLICAS', value }] })] });
    assert.deepEqual(natsClusterProblems(nats(), [withReplicas('3')]), []);
    onlyProblem(natsClusterProblems(nats(), [withReplicas('1')]), /container api: NATS_STREAM_REPLICAS 1 must be 3 to the 3 NATS servers/);
    onlyProblem(natsClusterProblems(nats(), [withReplicas('5')]), /NATS_STREAM_REPLICAS 5/);
    assert.deepEqual(natsClusterProblems(nats({ enabled: true, replicas: 5 }), [withReplicas('5')]), []);
    const fromMap = deployment({ containers: [container({ envFrom: [{ configMapRef: { name: 'platform-config' } }] })] });
    onlyProblem(natsClusterProblems(nats(), [fromMap, configMap('platform-config', { NATS_STREAM_REPLICAS: 'three' })]), /NATS_STREAM_REPLICAS three/);
  });
});
