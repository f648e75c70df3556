/** Unit tests: fast, offline. The lab (test/heavy/lab/*.lab.ts) has its own config. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // aws-cdk-lib's built-in template validation off: it asserted nothing here (test/util/synth-setup.ts).
  setupFiles: ['<rootDir>/test/util/synth-setup.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  testPathIgnorePatterns: ['/node_modules/', '/cdk.out/', '/.lab-cache/'],
  // A bound on a hung test, not a speed (jest's default is 5 s): in `npm test` the unit tests share the cores with the
  // lab's VMs at a lower priority (test/run-all.sh), so a synthesis that takes 2 s alone may take several times that.
  testTimeout: 60_000,
};
