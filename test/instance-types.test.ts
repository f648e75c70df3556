/**
 * What the library reads from instance type names (lib/private/instance-types.ts). The refusals and warnings are
 * rows of test/bad-input.test.ts; here: the facts and the cases that must stay silent.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheStorage, FsCacheClientLaunchTemplate } from '../lib';
import { instanceTypeFacts } from '../lib/private/instance-types';
import { importedFs, stackWithVpc } from './util';

const facts = (t: string) => instanceTypeFacts(new ec2.InstanceType(t));

describe('instance type facts', () => {
  test.each([
    ['c7gn.16xlarge', { vcpus: 64, memoryGiB: 128, instanceStore: false, xen: false }],
    ['m6id.xlarge', { vcpus: 4, memoryGiB: 16, instanceStore: true, nvmeInstanceStore: true, xen: false }],
    ['p3dn.24xlarge', { instanceStore: true, nvmeInstanceStore: true, xen: false }],
    ['i3.xlarge', { instanceStore: true, nvmeInstanceStore: true, xen: true }],
    ['i3.metal', { instanceStore: true, nvmeInstanceStore: true, xen: false }],
    ['m3.xlarge', { instanceStore: true, nvmeInstanceStore: false, xen: true, memoryGiB: undefined }],
    ['m4.2xlarge', { vcpus: 8, memoryGiB: 32, instanceStore: false, xen: true }],
    ['c4.large', { vcpus: 2, memoryGiB: undefined, instanceStore: false, xen: true }],
    ['t2.micro', { instanceStore: false, xen: true }],
    ['x2gd.4xlarge', { vcpus: 16, memoryGiB: undefined, instanceStore: true }],
    ['m7i.metal-48xl', { parsed: true, vcpus: undefined, instanceStore: false }],
    ['u-6tb1.112xlarge', { parsed: false }],
  ])('%s', (type, expected) => {
    expect(facts(type)).toMatchObject(expected);
    if (!facts(type).parsed) expect(Object.keys(facts(type))).toEqual(['parsed']);
  });
});

describe('client types whose cache devices are found (no error, no warning)', () => {
  test.each([
    ['i3.xlarge', CacheStorage.INSTANCE_STORE],
    ['f1.2xlarge', CacheStorage.INSTANCE_STORE],
    ['i3.metal', CacheStorage.EBS],
    ['m6id.xlarge', CacheStorage.INSTANCE_STORE],
    ['c7g.xlarge', CacheStorage.EBS],
    ['t3.large', CacheStorage.EBS],
  ])('%s with %s', (type, cacheStorage) => {
    const { stack, vpc } = stackWithVpc();
    new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, fileSystem: importedFs(stack), instanceType: new ec2.InstanceType(type), cacheStorage });
    Annotations.fromStack(stack).hasNoWarning('/TestStack/Client', Match.anyValue());
  });
});

describe('cache node sizes', () => {
  test.each(['c7gn.16xlarge', 'c6in.2xlarge', 'r7g.large', 'm4.4xlarge'])('%s: vCPUs and memory known, no warning', (type) => {
    const { stack, vpc } = stackWithVpc();
    new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), nodeCount: 1, instanceType: new ec2.InstanceType(type) });
    Annotations.fromStack(stack).hasNoWarning('/TestStack/Fleet', Match.anyValue());
  });
});
