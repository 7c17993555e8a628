/** Jest runs the TypeScript sources directly (ESM, ts-jest); libraries resolve to their src. */
export default {
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/test/install/fixtures/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@ordinal/test-support/(.*)$': '<rootDir>/test/support/$1.ts',
    '^@ordinal/nestjs$': '<rootDir>/src/index.ts',
    '^@ordinal/nestjs/testing$': '<rootDir>/src/testing/index.ts',
    '^@ordinal/([a-z-]+)/internal$': '<rootDir>/libs/$1/src/internal.ts',
    '^@ordinal/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.spec.json' }],
  },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 120000,
  // Two workers on two cores. Three were tried: each suite then took about twice as long
  // (server processes starting, PGlite, tsc in the install test all compute), and the run was
  // longer, not shorter (1,235 s against 890 s).
  maxWorkers: 2,
  // Jest's ESM mode (vm modules) keeps every suite's module graph (Nest, TypeORM, pg, amqplib)
  // alive in its worker: after ~48 suites a worker held 1.7-1.9 GB with no handle left open, and
  // could not exit within Jest's 500 ms after the run ("A worker process has failed to exit
  // gracefully"). A worker over this much heap after a suite is replaced by a fresh one.
  workerIdleMemoryLimit: '512MB',
};
