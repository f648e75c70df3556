/**
 * Lab tests: boot real Linux VMs (QEMU, software emulation) and run the instance scripts in them. Slow; run as root
 * through test/heavy/lab/run.sh, two files at a time (each file's lab has a network namespace of its own).
 */
const path = require('path');

module.exports = {
  rootDir: path.resolve(__dirname, '..', '..', '..'),
  roots: ['<rootDir>/test/heavy/lab'],
  testMatch: ['**/*.lab.ts'],
  testEnvironment: '<rootDir>/test/heavy/lab/harness/environment.js',
  // aws-cdk-lib's built-in template validation off: it asserted nothing here (test/util/synth-setup.ts).
  setupFiles: ['<rootDir>/test/util/synth-setup.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  testPathIgnorePatterns: ['/node_modules/', '/.lab-cache/'],
  // Above the harness's bound on one boot (BOOT_LIMIT_MS, 30 minutes), so that a hung boot is diagnosed by the harness.
  testTimeout: 45 * 60 * 1000,
  // Two files at once: a file's tests mostly drive one VM at a time, each VM has one vCPU, and with one file the host's
  // second core was idle half of the time (sampled every 10 s through a whole mirror.lab run).
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/heavy/lab/sequencer.js',
  verbose: true,
};
