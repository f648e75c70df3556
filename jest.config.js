/** Unit tests: fast, offline. The lab (test/lab/*.lab.ts) has its own config. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { isolatedModules: false }] },
  testPathIgnorePatterns: ['/node_modules/', '/cdk.out/', '/.lab-cache/'],
};
