const { spawnSync } = require('node:child_process');

/**
 * test/k8s/manifests renders the overlays with `kubectl kustomize`; without kubectl on the PATH it is
 * skipped, and said so, rather than failing a contributor who never deploys to Kubernetes.
 */
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).error !== undefined;
if (kubectlMissing) {
  process.stderr.write(
    'SKIPPED test/k8s/manifests.e2e-spec.ts (the Kubernetes overlays): kubectl is not on the PATH; install kubectl 1.27+ to run it\n',
  );
}

/**
 * The project e2e-postgres runs, on PostgreSQL, the end-to-end specs whose behaviour depends on the engine
 * (each says so with `onPostgres`: replicas sharing one database, claims, fencing, retention, synchronous
 * commit) and a few paths end to end through the whole bridge, beside the others in the same run. Every
 * other spec runs once, on SQLite; what the two stores promise the rest of the code is checked on both
 * engines by test/store/conformance (test/replicas/ talks to PostgreSQL itself). `npm run test:postgres`
 * runs that project alone.
 */
const POSTGRES_SPECS = [
  'app-page/single-settings',
  'click-to-call/click-claims-replicas',
  'click-to-call/dial-claims-replicas',
  'click-to-call/end-to-end',
  'delivery/calls-delivery',
  'delivery/crash-recovery',
  'delivery/held-expiry-failure',
  'dialer/dial-store',
  'portals/portal-uninstall',
  'recordings/push',
  'store/(?!conformance/)',
  'tasks/missed-call-tasks',
  'tenancy/portal-runtimes',
];

/** Unit specs live beside the code; end-to-end specs (real HTTP, real store, child processes) in test/. */
const tsJest = ['ts-jest', { tsconfig: { isolatedModules: true } }];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: 'src',
      // The sandbox portal (sandbox/, beside src/) keeps its unit specs beside its code too.
      roots: ['<rootDir>', '<rootDir>/../sandbox'],
      testRegex: '.*\\.spec\\.ts$',
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: 'test',
      testRegex: '.*\\.e2e-spec\\.ts$',
      testPathIgnorePatterns: ['/node_modules/', ...(kubectlMissing ? ['/test/k8s/manifests\\.'] : [])],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e-postgres',
      testEnvironment: 'node',
      rootDir: 'test',
      // TEST_DATABASE=postgres in each of its spec files' own process.env (test/support/test-database.ts).
      setupFiles: ['<rootDir>/support/on-postgres.js'],
      testRegex: `/test/(${POSTGRES_SPECS.join('|')}).*\\.e2e-spec\\.ts$`,
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
  testTimeout: 60000,
  // Names the run its PostgreSQL schemas carry, drops abandoned runs' schemas, then this run's at its end.
  globalSetup: '<rootDir>/test/support/postgres-setup.ts',
  globalTeardown: '<rootDir>/test/support/postgres-teardown.ts',
};
