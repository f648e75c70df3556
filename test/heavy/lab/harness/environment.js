/**
 * The lab's jest environment: node's, plus a record of the tests and hooks that failed so far in this file
 * (globalThis.__labFailedTests), so that a lab destroyed after a failure has its VMs say what they see while they
 * still run (test/heavy/lab/harness/diagnose.ts). Plain JavaScript: jest loads an environment without transforming it.
 */
const { TestEnvironment } = require('jest-environment-node');

function fullName(block) {
  const names = [];
  for (let b = block; b; b = b.parent) if (b.name && b.name !== 'ROOT_DESCRIBE_BLOCK') names.unshift(b.name);
  return names.join(' ');
}

class LabEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__labFailedTests = [];
  }

  async handleTestEvent(event) {
    if (event.name === 'test_fn_failure') this.global.__labFailedTests.push(fullName(event.test));
    if (event.name === 'hook_failure') this.global.__labFailedTests.push(`${event.hook.type} of ${fullName(event.hook.parent) || 'the file'}`);
  }
}

module.exports = LabEnvironment;
