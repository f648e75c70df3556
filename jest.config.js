/** Unit tests: fast, offline. The lab (test/heavy/lab/*.lab.ts) has its own config. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // aws-cdk-lib's built-in template validation off: it asserted nothing here (test/util/synth-setup.ts).
  setupFiles: ['<rootDir>/test/util/synth-setup.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  testPathIgnorePatterns: ['/node_modules/', '/cdk.out/', '/.lab-cache/'],
};
