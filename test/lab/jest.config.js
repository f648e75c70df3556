/**
 * Lab tests: boot real Linux VMs (QEMU, software emulation) and run the instance scripts in them. Slow; run as root
 * through test/lab/run.sh, one file at a time.
 */
const path = require('path');

module.exports = {
  rootDir: path.resolve(__dirname, '..', '..'),
  roots: ['<rootDir>/test/lab'],
  testMatch: ['**/*.lab.ts'],
  testEnvironment: '<rootDir>/test/lab/harness/environment.js',
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  testPathIgnorePatterns: ['/node_modules/', '/.lab-cache/'],
  testTimeout: 30 * 60 * 1000,
  maxWorkers: 1,
  verbose: true,
};
