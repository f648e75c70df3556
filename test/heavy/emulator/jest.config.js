/**
 * The AWS boundary against an emulator (test/heavy/emulator/*.emu.ts): the real aws CLI in the venv of test/heavy/gates/setup.sh,
 * moto behind TLS in a network namespace of its own (root). Run through test/heavy/emulator/run.sh.
 */
const path = require('path');

module.exports = {
  rootDir: path.resolve(__dirname, '..', '..', '..'),
  roots: ['<rootDir>/test/heavy/emulator'],
  testMatch: ['**/*.emu.ts'],
  testEnvironment: 'node',
  // aws-cdk-lib's built-in template validation off: it asserted nothing here (test/util/synth-setup.ts).
  setupFiles: ['<rootDir>/test/util/synth-setup.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  // A bound on a hung test, not a speed: a test runs its script once or twice, each bounded by RUN_LIMIT_MS.
  testTimeout: 12 * 60 * 1000,
  // Two files at once: each starts its own emulator in a network namespace of its own, so they share nothing but the
  // venv; the longest (aws-boundary) runs beside the others.
  maxWorkers: 2,
  verbose: true,
};
