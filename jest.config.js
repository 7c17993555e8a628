/** Jest runs the TypeScript sources directly (ESM, ts-jest); libraries resolve to their src. */
export default {
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/test/install/fixtures/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
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
  maxWorkers: 2,
};
