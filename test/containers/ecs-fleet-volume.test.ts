import { CfnParameter, Duration, Fn, Stack, Token, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import {
  CacheFleet, CacheFleetAttributes, CacheOrigin, EcsFleetVolume, FanOut, FleetExport, FsCacheClientLaunchTemplate, Mirror, MountSource, NfsVersion,
} from '../../lib';
import { CfnTemplate, PSEUDO_VALUES, resolveIntrinsics } from '../heavy/lab/harness/user-data';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { FSIDS } from '../util/bad-input';
import { launchTemplateUserData, parameters } from '../util/user-data';

/** A fleet with a mirror of /efs/app, a task definition for EC2 with one container, and the instances' group. */
function setUp(fleetProps: { clientNfsVersion?: NfsVersion } = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')], attributeCacheTimeout: Duration.seconds(30), ...fleetProps,
  });
  const taskDefinition = new ecs.Ec2TaskDefinition(stack, 'Task');
  const container = taskDefinition.addContainer('App', { image: ecs.ContainerImage.fromRegistry('public.ecr.aws/docker/library/busybox:latest'), memoryLimitMiB: 256 });
  const instances = new ec2.SecurityGroup(stack, 'Instances', { vpc });
  return { app, stack, vpc, fleet, taskDefinition, container, instances };
}

/** The `EFSC_*` parameters of the launch template `Clients`. */
function clientParameters(stack: Stack): Record<string, string> {
  return parameters(Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('Clients'))![1]);
}

function volumes(stack: Stack): Record<string, unknown>[] {
  const defs = Template.fromStack(stack).findResources('AWS::ECS::TaskDefinition');
  return Object.values(defs)[0].Properties.Volumes;
}

/** A fleet behind a network load balancer, whose endpoint is the balancer's DNS name. */
function nlbFleet(stack: Stack, vpc: ec2.IVpc): CacheFleet {
  const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'NlbEfs', {
    fileSystemId: 'fs-0123456789abcdef1', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'NlbEfsSg', 'sg-0123456789abcdef2'),
  });
  return new CacheFleet(stack, 'NlbFleet', { vpc, origin: CacheOrigin.efs(fileSystem), fanOut: FanOut.networkLoadBalancer() });
}

/** Docker's local driver's reading of `o`: split on commas, each part a mount option, `name` or `name=value`. */
function dockerOptions(o: string): [string, string | undefined][] {
  return o.split(',').map((part) => {
    const i = part.indexOf('=');
    return i < 0 ? [part, undefined] : [part.slice(0, i), part.slice(i + 1)];
  });
}

/**
 * `value` with each reference to another stack's output (`Fn::GetStackOutput`, which the template resolver does not
 * know) replaced by `name`: the only one a volume holds is the load balancer's DNS name of a fleet of another stack.
 */
function stackOutputs(value: unknown, name: string): unknown {
  if (Array.isArray(value)) return value.map((v) => stackOutputs(v, name));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if ('Fn::GetStackOutput' in o) {
    expect(JSON.stringify(o)).toMatch(/NlbFleet.*DNSName/);
    return name;
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, stackOutputs(v, name)]));
}

/** Values a deploy-time string could resolve to that would add or change options if spliced into `o` or `device`. */
const HOSTILE = [
  'a.example,rw,exec', 'addr=10.0.0.9', 'x ro', '/efs,rw', '/efs\nrw', '$(touch /tmp/pwned)', '\'; rw; \'', '"rw"', 'a: [rw]\n- exec', 'x\u0000rw',
];

/** Where a fleet's deploy-time values come from: a parameter, an import of another stack, an SSM parameter. */
const SOURCES: [string, (stack: Stack, name: string) => string][] = [
  ['a CfnParameter', (stack, name) => new CfnParameter(stack, name).valueAsString],
  ['an import', (_stack, name) => Fn.importValue(name)],
  ['an SSM parameter', (stack, name) => ssm.StringParameter.valueForStringParameter(stack, `/fleet/${name}`)],
];

/** Each attribute of an imported fleet that reaches the driver options, given as a deploy-time value. */
const ATTRIBUTES: [string, (v: (name: string) => string) => Partial<CacheFleetAttributes>, boolean][] = [
  ['endpoint', (v) => ({ endpoint: v('Endpoint') }), false],
  ['endpoint (a name under a deploy-time zone)', (v) => ({ endpoint: `nfs.${v('Zone')}` }), false],
  ['exportPath', (v) => ({ exportPath: v('ExportPath') }), false],
  ['mirrorExports[].exportPath', (v) => ({ mirrorExports: [{ path: '/efs/app', exportPath: v('MirrorExport'), fsid: FSIDS[0] }] }), true],
  ['attributeCacheTimeout', (v) => ({ attributeCacheTimeout: Duration.seconds(Token.asNumber(v('Ac'))) }), false],
  ['directoryCacheTimeout', (v) => ({ directoryCacheTimeout: Duration.seconds(Token.asNumber(v('AcDir'))) }), false],
];

describe('EcsFleetVolume driver options', () => {
  const cases = SOURCES.flatMap(([from, value]) => ATTRIBUTES.map(([attr, attrs, mirror]) => [attr, from, value, attrs, mirror] as const));
  test.each(cases)('an imported fleet\'s %s from %s is refused at synth, naming what to pass instead', (_attr, _from, value, attrs, mirror) => {
    const { stack, taskDefinition } = setUp();
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
      endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef1'),
      ...attrs((name) => value(stack, name)),
    });
    const source = mirror ? FleetExport.mirror(fleet, '/efs/app') : FleetExport.cacheFleet(fleet);
    expect(() => new EcsFleetVolume(stack, 'Data', { taskDefinition, source })).toThrow(new RegExp(
      '^Invalid source: the (endpoint|exportPath|mirrorExports\\[\\]\\.exportPath of \'/efs/app\'|attributeCacheTimeout|directoryCacheTimeout) ' +
      'of TestStack/Imported is .*Docker\'s local driver .*unchecked.* to CacheFleet\\.fromCacheFleetAttributes.*or mount a CacheFleet of this app'));
  });

  test('whatever the deploy-time values resolve to, a volume is refused at synth or Docker reads the library\'s options, each once', () => {
    // Every kind of source: fleets of this app (Route 53 and load balancer fan-out, a mirror, one whose zone is a
    // parameter), of another stack of the app, imported by literals and imported with each attribute a parameter.
    const { app, stack, vpc, fleet, taskDefinition } = setUp();
    const nlb = nlbFleet(stack, vpc);
    const other = new Stack(app, 'Other');
    const otherTd = new ecs.Ec2TaskDefinition(other, 'Task');
    const sg = ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef1');
    const imported = (id: string, attrs: Partial<CacheFleetAttributes>) =>
      CacheFleet.fromCacheFleetAttributes(stack, id, { endpoint: '10.1.2.3', exportPath: '/efs', securityGroup: sg, ...attrs });
    const zoned = new CacheFleet(stack, 'ZonedFleet', {
      vpc, origin: CacheOrigin.efs(efs.FileSystem.fromFileSystemAttributes(stack, 'ZonedEfs', { fileSystemId: 'fs-0123456789abcdef2', securityGroup: sg })),
      fanOut: FanOut.route53({ zoneName: new CfnParameter(stack, 'ZoneName').valueAsString }),
    });
    const candidates: [string, Stack, ecs.TaskDefinition, () => FleetExport][] = [
      ['Export', stack, taskDefinition, () => FleetExport.cacheFleet(fleet, { fsCache: true })],
      ['Mirror', stack, taskDefinition, () => FleetExport.mirror(fleet, '/efs/app')],
      ['Balanced', stack, taskDefinition, () => FleetExport.cacheFleet(nlb)],
      ['Across', other, otherTd, () => FleetExport.cacheFleet(nlb)],
      ['Literal', stack, taskDefinition, () => FleetExport.cacheFleet(imported('LiteralFleet', {}))],
      ['Zoned', stack, taskDefinition, () => FleetExport.cacheFleet(zoned)],
      ...ATTRIBUTES.map(([attr, attrs, mirror], i): [string, Stack, ecs.TaskDefinition, () => FleetExport] => [`Param${i}`, stack, taskDefinition, () => {
        const f = imported(`ParamFleet${i}`, attrs((name) => new CfnParameter(stack, `${name}${i}`).valueAsString));
        expect(attr).toBeTruthy();
        return mirror ? FleetExport.mirror(f, '/efs/app') : FleetExport.cacheFleet(f);
      }]),
    ];
    const refused: string[] = [];
    for (const [name, s, td, source] of candidates) {
      try {
        new EcsFleetVolume(s, name, { taskDefinition: td, source: source() });
      } catch (e) {
        expect(String(e)).toMatch(/^ValidationError: Invalid source: /);
        refused.push(name);
      }
    }
    expect(refused).toEqual(['Zoned', ...ATTRIBUTES.map((_a, i) => `Param${i}`)]);
    const nlbName = 'nlb-0123.elb.us-east-1.amazonaws.com';
    const expected = ['addr', 'nfsvers', 'rsize', 'wsize', 'hard', 'timeo', 'retrans', 'noresvport', 'ro'];
    let checked = 0;
    for (const s of [stack, other]) {
      const template = Template.fromStack(s).toJSON() as CfnTemplate;
      const volumesOf = Object.values(template.Resources ?? {}).filter((r) => r.Type === 'AWS::ECS::TaskDefinition')
        .flatMap((r) => r.Properties!.Volumes as { Name: string; DockerVolumeConfiguration: { DriverOpts: unknown } }[]);
      for (const hostile of HOSTILE) {
        // Only the load balancer's own DNS name (AWS makes it) is left; the rest of the template's values are hostile.
        const values: Record<string, string> = {
          ...PSEUDO_VALUES as Record<string, string>, ...Object.fromEntries(Object.keys(template.Parameters ?? {}).map((p) => [`Ref:${p}`, hostile])),
        };
        const getAtts = JSON.stringify(template).match(/"Fn::GetAtt":\["[^"]+","DNSName"\]/g) ?? [];
        const imports = JSON.stringify(template).match(/"Fn::ImportValue":"[^"]+"/g) ?? [];
        for (const g of getAtts) values[`Fn::GetAtt:${JSON.parse(`{${g}}`)['Fn::GetAtt'].join('.')}`] = nlbName;
        for (const i of imports) values[`Fn::ImportValue:${JSON.parse(`{${i}}`)['Fn::ImportValue']}`] = hostile;
        for (const v of volumesOf) {
          const opts = resolveIntrinsics(stackOutputs(v.DockerVolumeConfiguration.DriverOpts, nlbName), template, values) as Record<string, string>;
          expect(Object.keys(opts).sort()).toEqual(['device', 'o', 'type']);
          expect(opts.type).toBe('nfs');
          expect(opts.device).toMatch(/^:\/[A-Za-z0-9._/-]+$/);
          const parsed = dockerOptions(opts.o);
          const names = parsed.map(([k]) => k);
          expect(new Set(names).size).toBe(names.length);
          expect(names.filter((n) => !/^(fsc|nocto|ac(reg|dir)(min|max)|port|nolock|proto|mountproto|mountport|mountvers)$/.test(n))).toEqual(expected);
          for (const [, value] of parsed) expect(value ?? '').toMatch(/^[A-Za-z0-9._-]*$/);
          expect(opts.o).not.toContain(hostile);
          checked++;
        }
      }
    }
    expect(checked).toBe((candidates.length - refused.length) * HOSTILE.length);
  });

  test('a load balancer\'s DNS name is taken as the endpoint of an imported fleet too; a name with deploy-time parts is not', () => {
    const { stack, vpc, taskDefinition } = setUp();
    const nlb = nlbFleet(stack, vpc);
    const sg = ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef1');
    const again = CacheFleet.fromCacheFleetAttributes(stack, 'Again', { endpoint: nlb.endpoint, securityGroup: sg });
    const volume = new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(again) });
    expect(stack.resolve(volume.server)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^NlbFleet/), 'DNSName'] });
    const zone = new CfnParameter(stack, 'Zone').valueAsString;
    const mixed = CacheFleet.fromCacheFleetAttributes(stack, 'Mixed', { endpoint: `${nlb.endpoint}.${zone}`, securityGroup: sg });
    expect(() => new EcsFleetVolume(stack, 'MixedVolume', { taskDefinition, source: FleetExport.cacheFleet(mixed), volumeName: 'Mixed' }))
      .toThrow(/^Invalid source: the endpoint of TestStack\/Mixed is '\$\{NlbFleet.*DNSName\}\.\$\{parameter Zone\}' \(holds a token/);
    // Another attribute of a resource is not a host name AWS makes.
    const own = CacheFleet.fromCacheFleetAttributes(stack, 'Own', { endpoint: new ec2.SecurityGroup(stack, 'Real', { vpc }).securityGroupId, securityGroup: sg });
    expect(() => new EcsFleetVolume(stack, 'OwnVolume', { taskDefinition, source: FleetExport.cacheFleet(own), volumeName: 'Own' }))
      .toThrow(/^Invalid source: the endpoint of TestStack\/Own is Real.*GroupId \(a token, known at deploy time\)/);
  });

  test('a fleet of the user\'s own making whose literal endpoint or path would add options is refused', () => {
    const { stack, taskDefinition } = setUp();
    const base = CacheFleet.fromCacheFleetAttributes(stack, 'Base', {
      endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef1'),
    });
    const withEndpoint = Object.assign(Object.create(base), { endpoint: 'cache.internal,rw' });
    expect(() => new EcsFleetVolume(stack, 'A', { taskDefinition, source: FleetExport.cacheFleet(withEndpoint) }))
      .toThrow(/^Invalid source: the endpoint of TestStack\/Base is 'cache\.internal,rw': .*Give a DNS name or IPv4 address/);
    const withPath = Object.assign(Object.create(base), { exportPath: '/efs,rw' });
    expect(() => new EcsFleetVolume(stack, 'B', { taskDefinition, source: FleetExport.cacheFleet(withPath) }))
      .toThrow(/^Invalid source: the exportPath of TestStack\/Base is '\/efs,rw': .*device=:<path>/);
  });
});

describe('EcsFleetVolume', () => {
  test('mounts the fleet\'s export with the options of its EC2 clients, read-only, for the task only', () => {
    const { stack, fleet, taskDefinition, container, instances } = setUp();
    const volume = new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    volume.addMountPoint(container, '/data');
    const t = Template.fromStack(stack);
    const o = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,nocto,acregmin=30,acregmax=30,acdirmin=600,acdirmax=600';
    expect(volumes(stack)).toEqual([{
      Name: 'Data',
      DockerVolumeConfiguration: { Driver: 'local', Scope: 'task', DriverOpts: { type: 'nfs', device: ':/efs', o: `addr=${fleet.endpoint},${o}` } },
    }]);
    expect(volume.mountOptions.join(',')).toBe(o);
    expect(volume.volumeName).toBe('Data');
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ MountPoints: [{ SourceVolume: 'Data', ContainerPath: '/data', ReadOnly: true }] })],
    });
  });

  test('the options are the EC2 clients\' own, without fsc unless asked', () => {
    const { stack, vpc, fleet, taskDefinition } = setUp();
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet) });
    const plain = new EcsFleetVolume(stack, 'Plain', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    const cached = new EcsFleetVolume(stack, 'Cached', { taskDefinition, source: FleetExport.cacheFleet(fleet, { fsCache: true }) });
    const ec2Options = clientParameters(stack).EFSC_MOUNT_OPTIONS;
    expect(cached.mountOptions.join(',')).toBe(ec2Options);
    expect(['fsc', ...plain.mountOptions]).toEqual(cached.mountOptions);
    expect(clients.server).toBe(cached.server);
  });

  test('an NFSv3 fleet is mounted over NFSv3 with both ports named, and mountd\'s port opened', () => {
    const { stack, fleet, taskDefinition, instances } = setUp({ clientNfsVersion: NfsVersion.NFS_V3 });
    const volume = new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    expect(volume.mountOptions).toEqual(expect.arrayContaining(['nfsvers=3', 'nolock', 'proto=tcp', 'port=2049', 'mountproto=tcp', 'mountport=20048', 'mountvers=3']));
    expect(volume.mountOptions).not.toContain('nfsvers=4.1');
    const t = Template.fromStack(stack);
    for (const port of [2049, 20048]) {
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp', FromPort: port, ToPort: port, Description: `NFS (TCP ${port}) from ECS container instances`,
        SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Instances'), 'GroupId'] },
      });
    }
  });

  test('a mirror is mounted from /mirror/<path> on its own port, without fsc, and only 2050 is opened', () => {
    const { stack, fleet, taskDefinition, instances } = setUp();
    const volume = new EcsFleetVolume(stack, 'App', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app'), clients: [instances] });
    expect(volume.remotePath).toBe('/mirror/app');
    expect(volume.mountOptions.join(',')).toBe('nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,port=2050');
    expect((volumes(stack)[0] as { DockerVolumeConfiguration: { DriverOpts: { device: string } } }).DockerVolumeConfiguration.DriverOpts.device).toBe(':/mirror/app');
    const rules = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress', { Properties: { Description: Match.stringLikeRegexp('ECS container instances') } });
    expect(Object.values(rules).map((r) => r.Properties.FromPort)).toEqual([2050]);
  });

  test('the fleet\'s mirror options are the EC2 clients\' own', () => {
    const { stack, fleet, vpc, taskDefinition } = setUp();
    new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'] }) });
    const volume = new EcsFleetVolume(stack, 'App', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app') });
    expect(volume.mountOptions.join(',')).toBe(clientParameters(stack).EFSC_MIRROR_MOUNT_OPTIONS);
  });

  test('nconnect ends the options of the export or a mirror, in the driver\'s o= too; none by default', () => {
    const { stack, fleet, taskDefinition } = setUp();
    const plain = new EcsFleetVolume(stack, 'Plain', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    const four = new EcsFleetVolume(stack, 'Four', { taskDefinition, source: FleetExport.cacheFleet(fleet), nconnect: 4 });
    const mirror = new EcsFleetVolume(stack, 'App', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app'), nconnect: 16 });
    expect(plain.mountOptions.join(',')).not.toMatch(/nconnect/);
    expect(four.mountOptions).toEqual([...plain.mountOptions, 'nconnect=4']);
    expect(mirror.mountOptions[mirror.mountOptions.length - 1]).toBe('nconnect=16');
    type Volume = { DockerVolumeConfiguration: { DriverOpts: { o: string } } };
    const o = (volumes(stack) as Volume[]).map((v) => v.DockerVolumeConfiguration.DriverOpts.o);
    expect(o.map((x) => /nconnect=\d+$/.exec(x)?.[0])).toEqual([undefined, 'nconnect=4', 'nconnect=16']);
  });

  test('without clients, no rule is made', () => {
    const { stack, fleet, taskDefinition } = setUp();
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    const rules = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress', { Properties: { Description: Match.stringLikeRegexp('ECS') } });
    expect(rules).toEqual({});
  });

  test('two volumes of one name in a task definition are refused, now or at synth', () => {
    const { app, stack, fleet, taskDefinition } = setUp();
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    expect(() => new EcsFleetVolume(stack, 'Mirror', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app'), volumeName: 'Data' }))
      .toThrow(/^Invalid volumeName: TestStack\/Task already has a volume named 'Data': ECS takes one volume per name.*its own volumeName\. \(at TestStack\/Mirror;/);
    // Another volume of the same name, added after the fleet's, fails the synth.
    new EcsFleetVolume(stack, 'Www', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app') });
    taskDefinition.addVolume({ name: 'Www', host: { sourcePath: '/srv' } });
    expect(() => app.synth()).toThrow(/Invalid volumeName: TestStack\/Task has another volume named 'Www'/);
    // The same name in two task definitions is fine.
    const { stack: s2, fleet: f2, taskDefinition: td2 } = setUp();
    const other = new ecs.Ec2TaskDefinition(s2, 'Other');
    new EcsFleetVolume(s2, 'Data', { taskDefinition: td2, source: FleetExport.cacheFleet(f2) });
    expect(() => new EcsFleetVolume(s2, 'Data2', { taskDefinition: other, source: FleetExport.cacheFleet(f2), volumeName: 'Data' })).not.toThrow();
  });

  test('a task definition for ECS Anywhere (external instances) is taken', () => {
    const { stack, fleet } = setUp();
    const td = new ecs.TaskDefinition(stack, 'Anywhere', { compatibility: ecs.Compatibility.EXTERNAL });
    expect(new EcsFleetVolume(stack, 'Data', { taskDefinition: td, source: FleetExport.cacheFleet(fleet) }).volumeName).toBe('Data');
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 find nothing unacknowledged in the volume\'s rules', () => {
    const { app, stack, fleet, taskDefinition, instances } = setUp();
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    const reason = 'The user\'s task definition of the test, standing for theirs.';
    Validations.of(taskDefinition).acknowledge(...['AwsSolutions-ECS2', 'AwsSolutions-ECS7'].map((id) => ({ id, reason })));
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});
