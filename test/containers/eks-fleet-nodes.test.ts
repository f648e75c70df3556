import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnParameter, Fn, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as yaml from 'yaml';
import {
  CacheFleet, CacheOrigin, EcsFleetCapacity, EksFleetNodes, EksFleetNodesProps, FsCacheClientLaunchTemplate, FsCacheClientLaunchTemplateProps,
  MountSource,
} from '../../lib';
import { eksNodeGate } from '../../lib/client/fs-cache-client';
import { EKS_MIME_BOUNDARY, EKS_NODE_READY_FILE } from '../../lib/containers/eks-user-data';
import { assetPath } from '../../lib/private/assets';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData } from '../heavy/lab/harness/user-data';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { cloudInitParts, launchTemplateUserData, MimePart, mimeParts } from '../util/user-data';

const EKS_AL2023_ARM = EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.ARM_64);

/** A fleet, a cluster (an EKS cluster of this app unless `imported`), and FS-Cache hosts of the fleet on an EKS image. */
function setUp(hostProps: Partial<FsCacheClientLaunchTemplateProps> = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) });
  const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: EKS_AL2023_ARM, ...hostProps,
  });
  const cluster = (clusterProps: Partial<eks.ClusterProps> = {}) => new eks.Cluster(stack, 'Cluster', {
    vpc, version: eks.KubernetesVersion.V1_33, defaultCapacity: 0,
    kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
    ...clusterProps,
  });
  let imports = 0;
  const imported = (attrs: Partial<eks.ClusterAttributes> = {}) => eks.Cluster.fromClusterAttributes(stack, `Imported${imports++}`, {
    clusterName: 'apps', vpc, clusterEndpoint: 'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com',
    clusterCertificateAuthorityData: 'Q0FEQVRB', clusterSecurityGroupId: 'sg-0123456789abcdef0', ...attrs,
  });
  return { app, stack, vpc, fleet, hosts, cluster, imported };
}

/** The hosts' rendered user data, tokens as `<...>`. */
function hostsUserData(stack: ReturnType<typeof setUp>['stack']): string {
  return Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('Hosts'))![1];
}

/** The parts of the hosts' MIME multi-part user data, in order, after checking its boundary and its end. */
function hostsParts(stack: ReturnType<typeof setUp>['stack']): MimePart[] {
  const mime = mimeParts(hostsUserData(stack));
  expect(mime?.boundary).toBe(EKS_MIME_BOUNDARY);
  expect(mime?.end).toBe('--\n');
  return mime!.parts;
}

describe('EksFleetNodes', () => {
  test('user data: the NodeConfig, the bootstrap that marks its success, then the gate, as MIME parts', () => {
    const { stack, hosts, imported } = setUp();
    hosts.userData.addCommands('echo mine');
    new EksFleetNodes(stack, 'Nodes', { cluster: imported(), hosts, serviceIpv4Cidr: '172.20.0.0/16' });
    const parts = hostsParts(stack);
    expect(parts.map((p) => p.headers.split('\n')[0])).toEqual([
      'Content-Type: application/node.eks.aws', 'Content-Type: text/x-shellscript; charset="us-ascii"', 'Content-Type: text/x-shellscript; charset="us-ascii"',
    ]);
    // cloud-init runs the script parts in the order of their file names.
    const names = parts.slice(1).map((p) => /filename="([^"]+)"/.exec(p.headers)![1]);
    expect([...names].sort()).toEqual(names);
    expect(parts[0].body).toBe([
      '---', 'apiVersion: node.eks.aws/v1alpha1', 'kind: NodeConfig', 'spec:', '  cluster:', '    name: "apps"',
      '    apiServerEndpoint: "https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com"', '    certificateAuthority: "Q0FEQVRB"',
      '    cidr: "172.20.0.0/16"', ''].join('\n'));
    const script = parts[1].body;
    expect(script.startsWith('#!/bin/bash\nset -euo pipefail\n')).toBe(true);
    // The mark comes last, after the user's commands, and only in the first-boot run.
    expect(script.indexOf('echo mine')).toBeGreaterThan(0);
    expect(script.indexOf(`touch ${EKS_NODE_READY_FILE}`)).toBeGreaterThan(script.indexOf('echo mine'));
    expect(script).toContain(`if [ -z "\${1:-}" ]; then mkdir -p /run/efs-cache && touch ${EKS_NODE_READY_FILE}; fi\n`);
    // The gate: the asset without its comments, every command of it kept.
    expect(parts[2].body).toBe(eksNodeGate());
    const commands = (text: string) => text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(commands(parts[2].body)).toEqual(commands(fs.readFileSync(assetPath('client', 'eks-node-gate.sh'), 'utf8')));
    // No part holds a line that is the boundary.
    for (const p of parts) expect(p.body.split('\n')).not.toContain(`--${EKS_MIME_BOUNDARY}`);
  });

  test('a cluster of this app: its tokens in the NodeConfig, the cluster security group on the nodes, aws-auth by default', () => {
    const { stack, hosts, cluster } = setUp();
    const c = cluster();
    const nodes = new EksFleetNodes(stack, 'Nodes', { cluster: c, hosts, serviceIpv4Cidr: '10.100.0.0/16', minCapacity: 2, maxCapacity: 5 });
    const config = hostsParts(stack)[0].body;
    const clusterId = stack.getLogicalId(c.node.findChild('Resource').node.defaultChild as any);
    expect(config).toContain(`    name: "<Ref:${clusterId}>"`);
    expect(config).toContain(`    apiServerEndpoint: "<Fn::GetAtt:${clusterId}.Endpoint>"`);
    expect(config).toContain(`    certificateAuthority: "<Fn::GetAtt:${clusterId}.CertificateAuthorityData>"`);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MinSize: '2', MaxSize: '5',
      LaunchTemplate: { LaunchTemplateId: { Ref: stack.getLogicalId(hosts.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate) } },
      Tags: Match.arrayWith([Match.objectLike({ Key: { 'Fn::Join': ['', ['kubernetes.io/cluster/', { Ref: clusterId }]] }, Value: 'owned', PropagateAtLaunch: true })]),
    });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        SecurityGroupIds: [
          { 'Fn::GetAtt': [stack.getLogicalId(hosts.securityGroup.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] },
          { 'Fn::GetAtt': [clusterId, 'ClusterSecurityGroupId'] },
        ],
      }),
    });
    // CONFIG_MAP (the cluster's default): the node role in aws-auth, with the kubelet's groups.
    const manifests = Object.values(t.findResources('Custom::AWSCDK-EKS-KubernetesResource')).map((r) => JSON.stringify(r.Properties.Manifest));
    const awsAuth = manifests.find((m) => m.includes('aws-auth'))!;
    expect(awsAuth).toContain('system:node:{{EC2PrivateDNSName}}');
    expect(awsAuth).toContain('system:bootstrappers');
    expect(awsAuth).toContain(stack.getLogicalId(hosts.role.node.defaultChild as any));
    t.resourceCountIs('AWS::EKS::AccessEntry', 0);
    const roleId = stack.getLogicalId(hosts.role.node.defaultChild as any);
    const arns = JSON.stringify(t.toJSON().Resources[roleId].Properties.ManagedPolicyArns);
    for (const p of ['AmazonEKSWorkerNodePolicy', 'AmazonEKS_CNI_Policy', 'AmazonEC2ContainerRegistryReadOnly']) expect(arns).toContain(`policy/${p}`);
    expect(nodes.autoScalingGroup.role).toBe(hosts.role);
    // The EKS-optimized image's 20 GiB snapshot: the root volume is not the library's 16 GiB default.
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({ BlockDeviceMappings: Match.arrayWith([Match.objectLike({ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ VolumeSize: 20 }) })]) }),
    });
  });

  test('access entries where the cluster uses them: an EC2_LINUX entry of the node role, and no aws-auth mapping', () => {
    for (const mode of [eks.AuthenticationMode.API, eks.AuthenticationMode.API_AND_CONFIG_MAP]) {
      const { stack, hosts, cluster } = setUp();
      const c = cluster({ authenticationMode: mode });
      new EksFleetNodes(stack, 'Nodes', { cluster: c, hosts, serviceIpv4Cidr: '10.100.0.0/16' });
      Template.fromStack(stack).hasResourceProperties('AWS::EKS::AccessEntry', {
        Type: 'EC2_LINUX', PrincipalArn: { 'Fn::GetAtt': [stack.getLogicalId(hosts.role.node.defaultChild as any), 'Arn'] },
      });
    }
    const { stack, hosts, imported } = setUp();
    new EksFleetNodes(stack, 'Nodes', { cluster: imported(), hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    Template.fromStack(stack).hasResourceProperties('AWS::EKS::AccessEntry', { ClusterName: 'apps', Type: 'EC2_LINUX' });
  });

  test('the user data\'s size counts the MIME document, the NodeConfig (a deploy-time authority as a real one) and the gate', () => {
    const plain = setUp();
    const command = `echo '${'x'.repeat(6500)}'`;
    plain.hosts.userData.addCommands(command);
    expect(() => plain.app.synth()).not.toThrow();
    const { app, stack, hosts, cluster } = setUp();
    const before = hosts.userDataBytes;
    new EksFleetNodes(stack, 'Nodes', { cluster: cluster({ authenticationMode: eks.AuthenticationMode.API }), hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    // About 2.2 KB for the authority, and the headers, the NodeConfig's other lines and the gate.
    expect(hosts.userDataBytes - before).toBeGreaterThan(3500);
    expect(hosts.userDataBytes - before).toBeLessThan(5000);
    hosts.userData.addCommands(command);
    expect(() => app.synth()).toThrow(new RegExp('Invalid userData: the user data of the FS-Cache client launch template .* with the commands added ' +
      'to it would be about \\d+ bytes, over EC2\'s 16384-byte limit \\(the commands take about 6\\d\\d\\d, the EKS node\'s NodeConfig and gate take about \\d+\\)'));
  });

  test('a cluster of this app whose version and CIDR the template gives: the CIDR must be the cluster\'s', () => {
    const own = setUp();
    expect(() => new EksFleetNodes(own.stack, 'Nodes', { cluster: own.cluster({ serviceIpv4Cidr: '10.8.0.0/16' }), hosts: own.hosts, serviceIpv4Cidr: '10.8.0.0/16' }))
      .not.toThrow();
    for (const cidr of ['10.100.0.0/16', '172.20.0.0/16']) {
      const dflt = setUp();
      expect(() => new EksFleetNodes(dflt.stack, 'Nodes', { cluster: dflt.cluster(), hosts: dflt.hosts, serviceIpv4Cidr: cidr })).not.toThrow();
    }
  });

  // The service CIDR: a literal block EKS would take, the app's own cluster's where the template gives it.
  const CIDRS: Array<[string, (s: ReturnType<typeof setUp>) => Partial<EksFleetNodesProps>, RegExp]> = [
    ['wider than /12', () => ({ serviceIpv4Cidr: '10.0.0.0/8' }), new RegExp('^Invalid serviceIpv4Cidr: must be a block EKS takes as a service CIDR, /12 to /24 ' +
      'within 10\\.0\\.0\\.0/8, 172\\.16\\.0\\.0/12 or 192\\.168\\.0\\.0/16, got \'10\\.0\\.0\\.0/8\'\\. Give the cluster\'s own \\(aws eks describe-cluster')],
    ['narrower than /24', () => ({ serviceIpv4Cidr: '10.100.0.0/26' }), /^Invalid serviceIpv4Cidr: must be a block EKS takes as a service CIDR, \/12 to \/24/],
    ['public', () => ({ serviceIpv4Cidr: '100.64.0.0/16' }), /^Invalid serviceIpv4Cidr: must be a block EKS takes as a service CIDR/],
    ['with host bits set', () => ({ serviceIpv4Cidr: '10.100.7.0/16' }),
      /^Invalid serviceIpv4Cidr: '10\.100\.7\.0\/16' has host bits set: EKS names the block by its first address, '10\.100\.0\.0\/16'\./],
    ['with a leading zero', () => ({ serviceIpv4Cidr: '10.100.00.0/16' }), /^Invalid serviceIpv4Cidr: must be the cluster's IPv4 service CIDR block/],
    ['from a parameter', (s) => ({ serviceIpv4Cidr: new CfnParameter(s.stack, 'Cidr').valueAsString }), new RegExp('^Invalid serviceIpv4Cidr: must be known ' +
      'at synth \\(nodeadm reads it in the NodeConfig\'s YAML, where CloudFormation cannot quote a deploy-time value\\), got parameter Cidr')],
    ['other than that of the app\'s own cluster', (s) => ({ cluster: s.cluster({ serviceIpv4Cidr: '10.8.0.0/16' }), serviceIpv4Cidr: '10.100.0.0/16' }),
      /^Invalid serviceIpv4Cidr: is '10\.100\.0\.0\/16', but TestStack\/Cluster has serviceIpv4Cidr '10\.8\.0\.0\/16': give the same/],
    ['not EKS\'s default, for an app\'s cluster that sets none', (s) => ({ cluster: s.cluster(), serviceIpv4Cidr: '10.8.0.0/16' }), new RegExp(
      '^Invalid serviceIpv4Cidr: is \'10\\.8\\.0\\.0/16\', but TestStack/Cluster sets no serviceIpv4Cidr, so EKS gives it \'10\\.100\\.0\\.0/16\' or \'172\\.20\\.0\\.0/16\'')],
  ];
  test.each(CIDRS)('refused: a service CIDR %s', (_name, props, message) => {
    const s = setUp();
    expect(() => new EksFleetNodes(s.stack, 'Nodes', { cluster: s.imported(), hosts: s.hosts, serviceIpv4Cidr: '10.100.0.0/16', ...props(s) })).toThrow(message);
  });

  test('cdk-nag clean: each AWS managed policy of the node role acknowledged by name', () => {
    const { app, stack, hosts, imported } = setUp();
    new EksFleetNodes(stack, 'Nodes', { cluster: imported(), hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });

  test('refused: hosts without an EKS image, a second cluster, a bad CIDR, an imported cluster missing what nodes need', () => {
    const noImage = setUp({ machineImage: undefined });
    expect(() => new EksFleetNodes(noImage.stack, 'Nodes', { cluster: noImage.imported(), hosts: noImage.hosts, serviceIpv4Cidr: '10.100.0.0/16' }))
      .toThrow(/Invalid hosts: .*without nodeadm or the kubelet \(machineImage unset\).*EksFleetNodes\.amazonLinux2023Image/);
    const al2023 = setUp({ machineImage: ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.ARM_64 }) });
    expect(() => new EksFleetNodes(al2023.stack, 'Nodes', { cluster: al2023.imported(), hosts: al2023.hosts, serviceIpv4Cidr: '10.100.0.0/16' }))
      .toThrow(/Invalid hosts: .*is not an EKS-optimized Amazon Linux 2023 image/);
    const twice = setUp();
    new EksFleetNodes(twice.stack, 'Nodes', { cluster: twice.imported(), hosts: twice.hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    expect(() => new EksFleetNodes(twice.stack, 'Again', { cluster: twice.imported({ clusterName: 'other' }), hosts: twice.hosts, serviceIpv4Cidr: '10.100.0.0/16' }))
      .toThrow(/Invalid hosts: .*already makes the instances of the EKS cluster/);
    const ecsToo = setUp();
    new EksFleetNodes(ecsToo.stack, 'Nodes', { cluster: ecsToo.imported(), hosts: ecsToo.hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    const ecsCluster = new ecs.Cluster(ecsToo.stack, 'Ecs', { vpc: ecsToo.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
    expect(() => new EcsFleetCapacity(ecsToo.stack, 'Capacity', { cluster: ecsCluster, hosts: ecsToo.hosts })).toThrow(/already makes the instances/);
    for (const cidr of ['10.100.0.0', '10.300.0.0/16', '10.100.0.0/33', 'fd00::/108']) {
      const s = setUp();
      expect(() => new EksFleetNodes(s.stack, 'Nodes', { cluster: s.imported(), hosts: s.hosts, serviceIpv4Cidr: cidr }))
        .toThrow(/Invalid serviceIpv4Cidr: must be the cluster's IPv4 service CIDR block/);
    }
    for (const missing of ['clusterEndpoint', 'clusterCertificateAuthorityData', 'clusterSecurityGroupId', 'vpc']) {
      const s = setUp();
      expect(() => new EksFleetNodes(s.stack, 'Nodes', { cluster: s.imported({ [missing]: undefined }), hosts: s.hosts, serviceIpv4Cidr: '10.100.0.0/16' }))
        .toThrow(new RegExp(`Invalid cluster: .* has no ${missing}: nodes cannot join it`));
    }
    for (const version of ['v1.33', '1.9', '1.22', '1.033', '1.33.1', '2.0', '1.']) {
      expect(() => EksFleetNodes.amazonLinux2023Image(version, ec2.InstanceArchitecture.X86_64))
        .toThrow(/^Invalid kubernetesVersion: must be a Kubernetes version of EKS's Amazon Linux 2023 images, 1\.23 or later/);
    }
    for (const version of ['1.23', '1.33', '1.100']) expect(() => EksFleetNodes.amazonLinux2023Image(version, ec2.InstanceArchitecture.X86_64)).not.toThrow();
  });

  test('images: an EKS AL2 image refused by the hosts, a smaller root volume refused, an unknown image warned', () => {
    const { stack, vpc, fleet } = setUp();
    const props = { vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge') };
    expect(() => new FsCacheClientLaunchTemplate(stack, 'Al2', {
      ...props, machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/recommended/image_id'),
    })).toThrow(/Invalid machineImage: is Amazon Linux 2 or older/);
    expect(() => new FsCacheClientLaunchTemplate(stack, 'Small', { ...props, machineImage: EKS_AL2023_ARM, rootVolumeSize: Size.gibibytes(16) }))
      .toThrow(/Invalid rootVolumeSize: is 16 GiB, but the image .* is built with a 20 GiB root device/);
    const mapped = new FsCacheClientLaunchTemplate(stack, 'Mapped', { ...props, machineImage: ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' }) });
    new EksFleetNodes(stack, 'Nodes', {
      cluster: eks.Cluster.fromClusterAttributes(stack, 'C', {
        clusterName: 'apps', vpc, clusterEndpoint: 'https://e', clusterCertificateAuthorityData: 'Q0E=', clusterSecurityGroupId: 'sg-0123456789abcdef0',
      }), hosts: mapped, serviceIpv4Cidr: '10.100.0.0/16',
    });
    Annotations.fromStack(stack).hasWarning('/TestStack/Nodes', Match.stringLikeRegexp('image is not known here'));
  });
});

describe('assets/client/eks-node-gate.sh, as the user data holds it', () => {
  /** Runs the gate with a systemctl stub that records its calls and shows `dropIns` as the unit's drop-ins. */
  function gate(ready: boolean, showDropIn = true) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-gate-'));
    const readyFile = path.join(dir, 'ready');
    const dropIn = path.join(dir, 'run-systemd', 'nodeadm-run.service.d', '50-efs-cache-gate.conf');
    if (ready) fs.writeFileSync(readyFile, '');
    fs.writeFileSync(path.join(dir, 'systemctl'), `#!/bin/bash\necho "$*" >>'${dir}/calls'\n` +
      `[ "$1" != show ] || echo /usr/lib/systemd/system/nodeadm-run.service.d/x.conf ${showDropIn ? dropIn : ''}\n`, { mode: 0o755 });
    // The gate as the user data holds it (without its comments).
    const script = path.join(dir, 'gate.sh');
    fs.writeFileSync(script, eksNodeGate());
    const r = spawnSync('bash', [script], {
      encoding: 'utf8', env: { PATH: `${dir}:/usr/bin:/bin`, EFSC_READY_FILE: readyFile, EFSC_SYSTEMD_RUNTIME_DIR: path.join(dir, 'run-systemd') },
    });
    const calls = fs.existsSync(path.join(dir, 'calls')) ? fs.readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n') : [];
    return { status: r.status, stderr: r.stderr, calls, dropIn: fs.existsSync(dropIn) ? fs.readFileSync(dropIn, 'utf8') : undefined, readyFile };
  }

  test('the bootstrap marked its success: the kubelet is left to start', () => {
    const r = gate(true);
    expect(r.status).toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.dropIn).toBeUndefined();
    expect(r.stderr).toContain('the FS-Cache bootstrap succeeded');
  });

  test('no mark: nodeadm-run.service gets a runtime drop-in conditioned on the mark, its pending start withdrawn, and it says why', () => {
    const r = gate(false);
    expect(r.status).toBe(1);
    expect(r.dropIn).toBe(`[Unit]\n# cdk-efs-cache: the FS-Cache bootstrap did not succeed (eks-node-gate.sh)\nConditionPathExists=${r.readyFile}\n`);
    expect(r.calls).toEqual(['daemon-reload', 'stop --no-block nodeadm-run.service', 'show -P DropInPaths nodeadm-run.service']);
    expect(r.stderr).toMatch(/did not succeed .* this node does not join the cluster;.*does not start during this boot.*cloud-init-output\.log/s);
    expect(r.stderr).not.toContain('may still start');
    expect(gate(false, false).stderr).toMatch(/systemd does not hold .*50-efs-cache-gate\.conf for nodeadm-run\.service: the kubelet may still start/);
  });
});

/**
 * The NodeConfig and the MIME document with hostile deploy-time values: the template resolved as CloudFormation would
 * resolve it, then read as nodeadm and cloud-init read it (the MIME split, Python's email parser, a YAML parser).
 */
describe('EksFleetNodes: deploy-time values stay data in the NodeConfig and the MIME document', () => {
  /** Values that would change the NodeConfig's meaning, or open a part of the document, were they spliced as they are. */
  const HOSTILE = [
    'apps"\n    flags: ["--node-labels=pwned=true"]\n#',
    'x"\n  kubelet:\n    flags: ["--pwned"]\n"',
    '$(touch /tmp/pwned)',
    'a,b,c',
    `\n--${EKS_MIME_BOUNDARY}\nContent-Type: text/x-shellscript\n\n#!/bin/bash\ntouch /tmp/pwned\n`,
    '\n--==cdk-efs-cache-eks-node==\nContent-Type: text/x-shellscript\n\n#!/bin/bash\ntouch /tmp/pwned\n',
    "'; touch /tmp/pwned; echo '",
  ];
  const ENDPOINT = 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com';
  const AUTHORITY = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n').toString('base64');

  /**
   * Nodes of an EKS cluster of the app (its name, endpoint and authority written by EKS) that are clients of a fleet
   * whose endpoint is a template parameter (it reaches the bootstrap's part), with a user's command.
   */
  function parameterized(cfnCluster = false) {
    const { stack, vpc } = stackWithVpc();
    const server = new CfnParameter(stack, 'FleetEndpoint');
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: server.valueAsString, securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'),
    });
    const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
      vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: EKS_AL2023_ARM,
    });
    hosts.userData.addCommands('echo "the user\'s own command"');
    let cluster: eks.ICluster;
    let id: string;
    if (cfnCluster) {
      const l1 = new eks.CfnCluster(stack, 'L1', { roleArn: 'arn:aws:iam::123456789012:role/eks', resourcesVpcConfig: { subnetIds: ['subnet-1'] } });
      cluster = eks.Cluster.fromClusterAttributes(stack, 'Imported', {
        clusterName: l1.ref, clusterEndpoint: l1.attrEndpoint, clusterCertificateAuthorityData: l1.attrCertificateAuthorityData,
        clusterSecurityGroupId: l1.attrClusterSecurityGroupId, vpc,
      });
      id = stack.getLogicalId(l1);
    } else {
      const c = new eks.Cluster(stack, 'Cluster', {
        vpc, version: eks.KubernetesVersion.V1_33, defaultCapacity: 0, authenticationMode: eks.AuthenticationMode.API,
        kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
      });
      cluster = c;
      id = stack.getLogicalId(c.node.findChild('Resource').node.defaultChild as any);
    }
    new EksFleetNodes(stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: cfnCluster ? '10.100.0.0/16' : '172.20.0.0/16' });
    const template = Template.fromStack(stack).toJSON() as CfnTemplate;
    const logicalId = stack.getLogicalId(hosts.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate);
    /** The user data EC2 would give the node, the parameter holding `endpoint`. */
    const resolved = (endpoint: string) => resolveUserData(template, logicalId, {
      ...PSEUDO_VALUES, 'Ref:FleetEndpoint': endpoint,
      [`Ref:${id}`]: 'apps', [`Fn::GetAtt:${id}.Endpoint`]: ENDPOINT, [`Fn::GetAtt:${id}.CertificateAuthorityData`]: AUTHORITY,
    });
    return { resolved, cidr: cfnCluster ? '10.100.0.0/16' : '172.20.0.0/16' };
  }

  /** The document as its readers see it: the parts Python's email parser finds, and the NodeConfig a YAML parser reads. */
  function asRead(userData: string) {
    const parts = cloudInitParts(userData);
    const split = mimeParts(userData);
    const config = parts.find((p) => p.type === 'application/node.eks.aws');
    return {
      kinds: parts.map((p) => [p.type, p.file]),
      splitKinds: split?.parts.map((p) => [p.type, p.file ?? null]),
      nodeConfig: config ? yaml.parseAllDocuments(config.body).map((d) => d.toJSON()) : undefined,
      scriptParts: parts.filter((p) => p.type === 'text/x-shellscript').map((p) => p.body),
    };
  }

  const KINDS = [
    ['application/node.eks.aws', null],
    ['text/x-shellscript', '10-efs-cache-client.sh'],
    ['text/x-shellscript', '20-efs-cache-eks-node-gate.sh'],
  ];
  const nodeConfig = (cidr: string) => [{
    apiVersion: 'node.eks.aws/v1alpha1', kind: 'NodeConfig',
    spec: { cluster: { name: 'apps', apiServerEndpoint: ENDPOINT, certificateAuthority: AUTHORITY, cidr } },
  }];

  test.each([false, true])('hostile values of the template change no key, no value and no part (CfnCluster: %s)', (cfnCluster) => {
    const s = parameterized(cfnCluster);
    for (const hostile of HOSTILE) {
      const read = asRead(s.resolved(hostile));
      expect({ hostile, kinds: read.kinds, split: read.splitKinds }).toEqual({ hostile, kinds: KINDS, split: KINDS });
      expect(read.nodeConfig).toEqual(nodeConfig(s.cidr));
      // The value reaches the bootstrap only as base64, which the script decodes into a variable.
      expect(read.scriptParts[0]).toContain(Buffer.from(hostile, 'utf8').toString('base64'));
      for (const body of read.scriptParts) expect(body).not.toContain('pwned');
    }
  });

  test('control: the same readers see a changed NodeConfig and an extra part when a value is spliced as it is', () => {
    const s = parameterized();
    const good = s.resolved('cache.efs-cache.internal');
    expect(asRead(good).nodeConfig).toEqual(nodeConfig(s.cidr));
    const spliced = good.replace('    name: "apps"', `    name: "${HOSTILE[0]}"`);
    expect(asRead(spliced).nodeConfig).not.toEqual(nodeConfig(s.cidr));
    const opened = good.replace('    name: "apps"', `    name: "apps${HOSTILE[4]}"`);
    expect(asRead(opened).kinds).toHaveLength(4);
    expect(asRead(opened).splitKinds).toHaveLength(4);
  });

  /** A value of each kind the app cannot vouch for, for the cluster's attribute `attr`. */
  const untrusted: Array<[string, (stack: Stack) => string]> = [
    ['a parameter', (stack) => new CfnParameter(stack, 'P').valueAsString],
    ['an import', () => Fn.importValue('apps-value')],
    ['an SSM parameter', (stack) => ssm.StringParameter.valueForStringParameter(stack, '/apps/value')],
    ['a literal around a token', (stack) => `https://${new CfnParameter(stack, 'Host').valueAsString}`],
    ['another attribute of the cluster', (stack) => new eks.CfnCluster(stack, 'L1', { roleArn: 'r', resourcesVpcConfig: { subnetIds: ['s'] } }).attrArn],
  ];
  const ATTRS = ['clusterName', 'clusterEndpoint', 'clusterCertificateAuthorityData'] as const;
  test.each(ATTRS.flatMap((attr) => untrusted.map(([kind, make]) => [attr, kind, make] as const)))(
    'refused: the %s as %s, with what to give instead', (attr, _kind, make) => {
      const s = setUp();
      const cluster = s.imported({ [attr]: make(s.stack) });
      expect(() => new EksFleetNodes(s.stack, 'Nodes', { cluster, hosts: s.hosts, serviceIpv4Cidr: '10.100.0.0/16' })).toThrow(new RegExp(
        `^Invalid cluster: its ${attr} is .*, which nodeadm would read in the NodeConfig's YAML of the user data, where CloudFormation ` +
        'splices a value as it is: .*Give an EKS cluster of this app \\(eks\\.Cluster, or the attributes of an eks\\.CfnCluster\\).*or the value as a ' +
        'literal, checked at synth \\(aws eks describe-cluster .*\\)\\. \\(at TestStack/Nodes\\)$'));
    });

  test('an EKS cluster of another stack of the app: its attributes, imported across stacks, are EKS\'s and accepted', () => {
    const { app, stack: clusterStack, vpc } = stackWithVpc(undefined, 'ClusterStack');
    const l1 = new eks.CfnCluster(clusterStack, 'L1', { roleArn: 'r', resourcesVpcConfig: { subnetIds: ['s'] } });
    const stack = new Stack(app, 'NodesStack');
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'),
    });
    const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
      vpc: ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-1', availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-1'] }),
      source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: EKS_AL2023_ARM,
    });
    const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', {
      clusterName: l1.ref, clusterEndpoint: l1.attrEndpoint, clusterCertificateAuthorityData: l1.attrCertificateAuthorityData,
      clusterSecurityGroupId: 'sg-0123456789abcdef0', vpc,
    });
    new EksFleetNodes(stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    const config = mimeParts(Object.values(launchTemplateUserData(stack))[0])!.parts[0].body;
    // The app passes it from the stack that makes the cluster (an output of that stack).
    expect(config).toMatch(/^ {4}apiServerEndpoint: "<Fn::(ImportValue|GetStackOutput):.*Endpoint.*>"$/m);
  });

  test('hosts with enaExpress: the cluster\'s security group joins the hosts\' in the interface entry that carries ENA Express', () => {
    const { stack, hosts, imported } = setUp({ enaExpress: true, instanceType: new ec2.InstanceType('m7gd.16xlarge') });
    new EksFleetNodes(stack, 'Nodes', { cluster: imported(), hosts, serviceIpv4Cidr: '172.20.0.0/16' });
    const data = Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(hosts.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)]
      .Properties.LaunchTemplateData;
    expect(data.SecurityGroupIds).toBeUndefined();
    expect(data.NetworkInterfaces).toEqual([{
      DeviceIndex: 0,
      Groups: [{ 'Fn::GetAtt': [stack.getLogicalId(hosts.securityGroup.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] }, 'sg-0123456789abcdef0'],
      EnaSrdSpecification: { EnaSrdEnabled: true },
    }]);
  });

  test('the boundary: in no part of the document, and a user\'s command that holds it is refused', () => {
    const { app, stack, hosts, imported } = setUp();
    new EksFleetNodes(stack, 'Nodes', { cluster: imported(), hosts, serviceIpv4Cidr: '10.100.0.0/16' });
    // No value the NodeConfig or the scripts may hold at deploy time has a `,`: cluster names, https URLs, base64, CIDRs.
    expect(EKS_MIME_BOUNDARY).toContain(',');
    hosts.userData.addCommands(`echo '--${EKS_MIME_BOUNDARY}'`);
    expect(() => app.synth()).toThrow(new RegExp(`Invalid userData: holds '${EKS_MIME_BOUNDARY}', the boundary of the EKS node's MIME user data`));
  });
});
