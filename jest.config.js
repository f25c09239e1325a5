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
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
  testTimeout: 60000,
  // TEST_DATABASE=postgres: drops the test schemas earlier runs left (test/support/test-database.ts).
  globalSetup: '<rootDir>/test/support/postgres-setup.ts',
};
