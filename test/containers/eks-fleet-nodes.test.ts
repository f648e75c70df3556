import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Size } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  CacheFleet, CacheOrigin, EcsFleetCapacity, EksFleetNodes, FsCacheClientLaunchTemplate, FsCacheClientLaunchTemplateProps, MountSource,
} from '../../lib';
import { EKS_MIME_BOUNDARY, EKS_NODE_READY_FILE, eksNodeGate } from '../../lib/client/fs-cache-client';
import { assetPath } from '../../lib/private/assets';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, MimePart, mimeParts } from '../util/user-data';

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
    expect(() => EksFleetNodes.amazonLinux2023Image('v1.33', ec2.InstanceArchitecture.X86_64)).toThrow(/must read as 1\.N/);
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
