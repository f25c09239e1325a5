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
  ],
  testTimeout: 60000,
  // TEST_DATABASE=postgres: drops the test schemas earlier runs left (test/support/test-database.ts).
  globalSetup: '<rootDir>/test/support/postgres-setup.ts',
};
