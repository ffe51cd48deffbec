/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  // The slow files first, so that none starts last beside an idle worker (see the file).
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  testTimeout: 30000,
  // Two test files at a time: most of a test's time is spent waiting on Postgres, Redis,
  // Chromium and the processes it starts, so two fit on two cores (the whole suite in about
  // 9 minutes instead of 15 with one); JEST_MAX_WORKERS=1 runs them one by one.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
};
