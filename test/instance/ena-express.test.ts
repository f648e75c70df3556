/**
 * ENA Express (lib/instance/ena-express.ts, with the generated list lib/instance/ena-express-types.ts): off by
 * default with nothing rendered; on, the nodes' launch template (its interface entry carrying the security groups),
 * the stable interface's attach (a parameter of the node's bootstrap) and a fleet's clients; a type known not to
 * support it refused, one the list does not know warned; the list itself against its source and defaults. That the
 * list is what the pinned moto's data gives is the gates' check (test/heavy/gates/run.ts); that the node's attach call
 * carries it, the emulator's (test/heavy/emulator/aws-boundary.emu.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { Stack, Token } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CachedFileSystem, CacheFleet, CacheFleetProps, CacheOrigin, Capacity, FanOut, FsCacheClientLaunchTemplate, FsCacheClientOptions, MountSource,
} from '../../lib';
import { ENA_EXPRESS_TYPES, supportsEnaExpress } from '../../lib/instance/ena-express-types';
import { INSTANCE_TYPE_REGIONS } from '../../lib/instance/instance-type-regions';
import { importedFs, nagFindings, newApp, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

const ROOT = path.join(__dirname, '..', '..');
const pinnedMoto = /^moto(?:\[[^\]]*\])?==(\S+)$/m.exec(fs.readFileSync(path.join(ROOT, 'requirements-dev.txt'), 'utf8'))?.[1];

function fleetStack(props: Partial<CacheFleetProps> = {}) {
  const stack = new Stack(newApp(), 'Stack', { env: { account: '123456789012', region: 'us-east-1' } });
  const vpc = new ec2.Vpc(stack, 'Vpc');
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props });
  return { stack, vpc, fleet };
}
function clientOf(props: Partial<FsCacheClientOptions> = {}, fleetProps: Partial<CacheFleetProps> = { enaExpress: true }) {
  const { stack, vpc, fleet } = fleetStack(fleetProps);
  const client = new FsCacheClientLaunchTemplate(stack, 'Clients', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6id.8xlarge'), ...props,
  });
  return { stack, fleet, client };
}
/** The parameters of the nodes' bootstrap, as rendered into their launch template's user data. */
const nodeParameters = (stack: Stack, fleet: CacheFleet) => parameters(launchTemplateUserData(stack)[logicalId(stack, fleet.launchTemplate)]);
const warned = (stack: Stack, id: string) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(`\\[ack: ${id}\\]`));
/** The launch template data of `logicalId`'s launch template. */
const templateData = (stack: Stack, logicalId: string) => Template.fromStack(stack).toJSON().Resources[logicalId].Properties.LaunchTemplateData;
const logicalId = (stack: Stack, template: ec2.LaunchTemplate) => stack.getLogicalId(template.node.defaultChild as ec2.CfnLaunchTemplate);

describe('off (the default): nothing changes', () => {
  test('the nodes\' and clients\' launch templates name their security groups as before, with no interface entry', () => {
    const { stack, fleet, client } = clientOf({}, {});
    expect(fleet.enaExpress).toBe(false);
    for (const t of [fleet.launchTemplate, client.launchTemplate]) {
      const data = templateData(stack, logicalId(stack, t));
      expect(data.NetworkInterfaces).toBeUndefined();
      expect(data.SecurityGroupIds).toHaveLength(1);
    }
  });

  test('the nodes\' bootstrap gets no EFSC_ENA_EXPRESS', () => {
    const { stack, fleet } = fleetStack();
    expect(nodeParameters(stack, fleet).EFSC_ENA_EXPRESS).toBeUndefined();
  });

  test('given false: the same template as not given', () => {
    const a = fleetStack();
    const b = fleetStack({ enaExpress: false });
    expect(Template.fromStack(b.stack).toJSON()).toEqual(Template.fromStack(a.stack).toJSON());
  });
});

describe('on, on the cache nodes', () => {
  test('the primary interface: ENA Express for TCP (UDP left off), the groups inside the interface entry, none beside it', () => {
    const { stack, fleet } = fleetStack({ enaExpress: true });
    expect(fleet.enaExpress).toBe(true);
    const data = templateData(stack, logicalId(stack, fleet.launchTemplate));
    expect(data.SecurityGroupIds).toBeUndefined();
    expect(data.NetworkInterfaces).toEqual([{
      DeviceIndex: 0,
      Groups: [{ 'Fn::GetAtt': [stack.getLogicalId(fleet.securityGroup.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] }],
      EnaSrdSpecification: { EnaSrdEnabled: true },
    }]);
  });

  // That the node's attach call then carries EnaSrdSpecification.EnaSrdEnabled=true is the emulator's proof.
  test('the stable interface: the bootstrap that attaches it gets EFSC_ENA_EXPRESS=true', () => {
    const { stack, fleet } = fleetStack({ enaExpress: true });
    expect(fleet.nodes.length).toBe(2);
    expect(nodeParameters(stack, fleet).EFSC_ENA_EXPRESS).toBe('true');
  });

  test('a security group added to the template later lands in the interface entry too', () => {
    const { stack, fleet, vpc } = fleetStack({ enaExpress: true });
    const extra = new ec2.SecurityGroup(stack, 'Extra', { vpc });
    fleet.launchTemplate.connections.addSecurityGroup(extra);
    const data = templateData(stack, logicalId(stack, fleet.launchTemplate));
    expect(data.NetworkInterfaces[0].Groups).toHaveLength(2);
    expect(data.SecurityGroupIds).toBeUndefined();
  });

  test('through CachedFileSystem\'s cacheFleet options, and its clients\' options', () => {
    const stack = new Stack(newApp(), 'Stack', { env: { account: '123456789012', region: 'us-east-1' } });
    const cached = new CachedFileSystem(stack, 'Cached', { vpc: new ec2.Vpc(stack, 'Vpc'), cacheFleet: { enaExpress: true } });
    const clients = cached.addClientLaunchTemplate('Clients', { enaExpress: true, instanceType: new ec2.InstanceType('m6id.8xlarge') });
    for (const t of [cached.cacheFleet!.launchTemplate, clients.launchTemplate]) {
      expect(templateData(stack, logicalId(stack, t)).NetworkInterfaces[0].EnaSrdSpecification).toEqual({ EnaSrdEnabled: true });
    }
  });

  test('behind a load balancer: a warning that clients\' flows end at the load balancer', () => {
    const { stack } = fleetStack({ enaExpress: true, fanOut: FanOut.networkLoadBalancer() });
    expect(warned(stack, 'cdk-efs-cache:enaExpressBehindLoadBalancer')).toHaveLength(1);
    const elastic = fleetStack({ enaExpress: true, capacity: Capacity.elastic({ maxNodes: 4 }) });
    expect(warned(elastic.stack, 'cdk-efs-cache:enaExpressBehindLoadBalancer')).toHaveLength(1);
    expect(warned(fleetStack({ enaExpress: true }).stack, 'cdk-efs-cache:enaExpressBehindLoadBalancer')).toHaveLength(0);
  });
});

describe('on, on a fleet\'s clients', () => {
  test('the client launch template\'s interface has ENA Express, with its security group inside', () => {
    const { stack, client } = clientOf({ enaExpress: true });
    const data = templateData(stack, logicalId(stack, client.launchTemplate));
    expect(data.SecurityGroupIds).toBeUndefined();
    expect(data.NetworkInterfaces).toEqual([{
      DeviceIndex: 0,
      Groups: [{ 'Fn::GetAtt': [stack.getLogicalId(client.securityGroup.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] }],
      EnaSrdSpecification: { EnaSrdEnabled: true },
    }]);
  });

  test('of a fleet whose nodes do not have it: a warning; of one that has it, its own or imported with enaExpress: true, none', () => {
    const without = clientOf({ enaExpress: true }, {});
    const w = warned(without.stack, 'cdk-efs-cache:enaExpressFleetWithout');
    expect(w).toHaveLength(1);
    expect(JSON.stringify(w[0].entry.data)).toMatch(/the nodes of Stack\/Fleet do not have ENA Express on/);
    expect(warned(clientOf({ enaExpress: true }).stack, 'cdk-efs-cache:enaExpressFleetWithout')).toHaveLength(0);
    const importing = (attrs: { enaExpress?: boolean }) => {
      const stack = new Stack(newApp(), 'Stack', { env: { account: '123456789012', region: 'us-east-1' } });
      const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
        endpoint: 'cache.example.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef0'), ...attrs,
      });
      new FsCacheClientLaunchTemplate(stack, 'Clients', {
        vpc: new ec2.Vpc(stack, 'Vpc'), source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6id.8xlarge'), enaExpress: true,
      });
      return { fleet, warnings: warned(stack, 'cdk-efs-cache:enaExpressFleetWithout') };
    };
    expect(importing({}).fleet.enaExpress).toBe(false);
    expect(importing({}).warnings).toHaveLength(1);
    expect(importing({ enaExpress: true }).warnings).toHaveLength(0);
  });

  test('over EFS directly: refused (EFS is no instance, it would change nothing)', () => {
    const stack = new Stack(newApp(), 'Stack', { env: { account: '123456789012', region: 'us-east-1' } });
    expect(() => new FsCacheClientLaunchTemplate(stack, 'Clients', {
      vpc: new ec2.Vpc(stack, 'Vpc'), source: MountSource.fileSystem(importedFs(stack)), instanceType: new ec2.InstanceType('m6id.8xlarge'), enaExpress: true,
    })).toThrow(/^Invalid enaExpress: ENA Express works only between two instances .*MountSource\.fileSystem/);
  });
});

test('cdk-nag: the same findings with it on as off (the interface entry moves no group out of the checks\' sight)', () => {
  const findings = (on: boolean) => {
    const { app, stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), enaExpress: on });
    new FsCacheClientLaunchTemplate(stack, 'Clients', {
      vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6id.8xlarge'), enaExpress: on,
    });
    return nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA']);
  };
  expect(findings(true)).toEqual(findings(false));
});

describe('the instance type', () => {
  test.each([
    ['nodes', () => fleetStack({ enaExpress: true, instanceType: new ec2.InstanceType('c7gn.xlarge') })],
    ['clients (the default m6id.xlarge)', () => clientOf({ enaExpress: true, instanceType: undefined })],
    ['nodes of a family none of whose types has it', () => fleetStack({ enaExpress: true, instanceType: new ec2.InstanceType('c6g.16xlarge') })],
  ])('%s of a type known not to support it: refused, naming the type', (_what, build) => {
    expect(build).toThrow(/^Invalid enaExpress: (c7gn\.xlarge|m6id\.xlarge|c6g\.16xlarge) does not support ENA Express \(DescribeInstanceTypes, \d{4}-\d\d-\d\d\)/);
  });

  test('the same types with it off: no error', () => {
    expect(() => fleetStack({ instanceType: new ec2.InstanceType('c7gn.xlarge') })).not.toThrow();
    expect(() => clientOf({ instanceType: undefined }, {})).not.toThrow();
  });

  test.each([
    ['a type the list does not know', new ec2.InstanceType('zz9.48xlarge'), /zz9\.48xlarge supports ENA Express is not known here/],
    ['a token', new ec2.InstanceType(Token.asString({ Ref: 'NodeType' })), /the instance type \(a token\) supports ENA Express is not known here/],
  ])('%s: a warning to acknowledge, and ENA Express on', (_what, instanceType, message) => {
    const machineImage = ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.X86_64 });
    const { stack, fleet } = fleetStack({ enaExpress: true, instanceType, machineImage, tuning: { nfsdThreads: 64 } });
    const w = warned(stack, 'cdk-efs-cache:enaExpressTypeUnknown');
    expect(w).toHaveLength(1);
    expect(JSON.stringify(w[0].entry.data)).toMatch(message);
    expect(templateData(stack, logicalId(stack, fleet.launchTemplate)).NetworkInterfaces[0].EnaSrdSpecification).toEqual({ EnaSrdEnabled: true });
  });

  test('a supported type draws no warning', () => {
    const { stack } = fleetStack({ enaExpress: true });
    expect(warned(stack, 'cdk-efs-cache:enaExpressTypeUnknown')).toHaveLength(0);
  });
});

describe('the generated list', () => {
  test('the default node type supports it; the default client and seeder types do not (larger sizes of their families do)', () => {
    const d = INSTANCE_TYPE_REGIONS.defaults;
    expect(supportsEnaExpress(d.CacheFleet.type)).toBe(true);
    expect(d.CacheFleet.type).toBe('c7gn.16xlarge');
    expect(supportsEnaExpress(d.FsCacheClientLaunchTemplate.type)).toBe(false);
    expect(supportsEnaExpress(d.DataSeeder.type)).toBe(false);
    expect(['m6id.8xlarge', 'm7g.16xlarge'].map(supportsEnaExpress)).toEqual([true, true]);
  });

  test.each([
    ['c7gn.16xlarge', true], ['C7GN.16XLARGE', true], ['c6in.32xlarge', true], ['p5.48xlarge', true],
    ['c7gn.xlarge', false], ['t3.micro', false], ['m5.24xlarge', false],
    ['zz9.large', undefined], ['c7gn.99xlarge', undefined], ['c7gn', undefined], ['', undefined], [Token.asString({ Ref: 'T' }), undefined],
  ])('%s: %s', (name, expected) => {
    expect(supportsEnaExpress(name as string)).toBe(expected);
  });

  test('names its generator, its source (the moto version requirements-dev.txt pins) and a date; no name in two lists; sorted', () => {
    const text = fs.readFileSync(path.join(ROOT, 'lib', 'instance', 'ena-express-types.ts'), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^\/\/ Generated by tools\/ena-express-types\.py: do not edit\./);
    expect(ENA_EXPRESS_TYPES.source).toContain(`moto ${pinnedMoto} (moto/ec2/resources/instance_types.json.gz`);
    expect(ENA_EXPRESS_TYPES.source).toContain('NetworkInfo.EnaSrdSupported');
    expect(ENA_EXPRESS_TYPES.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const lists = [ENA_EXPRESS_TYPES.supportingFamilies, ENA_EXPRESS_TYPES.notSupportingFamilies,
      ENA_EXPRESS_TYPES.supportingTypes, ENA_EXPRESS_TYPES.notSupportingTypes] as readonly string[][];
    const all = lists.flat();
    expect(new Set(all).size).toBe(all.length);
    for (const l of lists) expect([...l].sort()).toEqual(l);
  });
});
