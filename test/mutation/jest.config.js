/**
 * The tests StrykerJS runs against each mutant of the modules it mutates (stryker.config.json):
 * the fast tests that cover them, so a run takes minutes (the HTTP tests of the same code,
 * which start a gateway for each mutant, are left to `npm test`). No global setup: `npm run
 * test:mutation` (test/mutation/run.js) makes the run's database before Stryker starts and
 * drops it after, so the mutant runs do not each build one.
 */
const root = require('../../jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...root,
  rootDir: '../..',
  globalSetup: undefined,
  globalTeardown: undefined,
  testMatch: [
    '<rootDir>/test/mutation/**/*.test.ts',
    '<rootDir>/test/shared/ics.test.ts',
    '<rootDir>/test/gateway/platform-urls.test.ts',
  ],
};
