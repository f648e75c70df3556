/**
 * The stacks whose synthesized user data the lab runs, and the lab values that replace their tokens. The lab runs
 * exactly what CDK rendered: only deployment-time values (the file system id, the region, the stable interface
 * that the lab does not attach) are filled in here.
 */
import { CfnResource, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CacheFleet,
  CacheOrigin,
  Capacity,
  DiskCache,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountHelper,
  MountSource,
  NfsVersion,
} from '../../../../lib';
import { CacheNode } from '../../../../lib/cache-fleet/cache-node';
import { importedFs, newApp } from '../../../util';
import { CfnTemplate, IntrinsicValues, PSEUDO_VALUES, resolveUserData } from '../harness';

export const LAB_SUBNET = '10.77.0.0/24';
export const FS_ID = 'fs-0123456789abcdef0';
export const EFS_NAME = `${FS_ID}.efs.us-east-1.amazonaws.com`;
export const FLEET_NAME = 'cache.efs-cache.internal';
/** Where the lab's user steps (commands added to a template's userData) record that they ran. */
export const USER_STEP_LOG = '/var/log/lab-user-step';
/** Where the lab's long user step (several KB of commands added to a template's userData) writes, a line each. */
export const USER_STEPS_LOG = '/var/log/lab-user-steps';
/** How many commands the long user step has (each about 111 bytes: about 8.3 KB in all, over the 8 KB the README promises). */
export const USER_STEPS = 75;

/**
 * The long user step: a first line with the time it started, then USER_STEPS commands of about 110 bytes each, more
 * than half of EC2's 16 KB of user data, which the bootstrap's code no longer takes.
 */
export function longUserStep(): string[] {
  return [`echo "$(date +%s.%N) start" > ${USER_STEPS_LOG}`,
    ...Array.from({ length: USER_STEPS }, (_, i) => `echo "step ${String(i + 1).padStart(3, '0')} of ${USER_STEPS}: ${'.'.repeat(60)}" >> ${USER_STEPS_LOG}`)];
}

/** What the lab's emulated NVMe disks report as their model (instance store reports its own on EC2). */
export const LAB_NVME_MODEL = 'QEMU NVMe Ctrl';

export interface LabUserData {
  /** The cache nodes of the fleet (one launch template for all). */
  readonly cacheNode: string;
  /** The instance tags of each node of the fleet, as its group propagates them (node 1 first). */
  readonly nodeTags: Array<Record<string, string>>;
  /** The cache node of a one-node fleet that gives up on its origin after 30 s (the unreachable-origin scenario). */
  readonly impatientNode: string;
  /** Its instance tags. */
  readonly impatientNodeTags: Record<string, string>;
  /** An FS-Cache client that mounts the origin directly. */
  readonly originClient: string;
  /** An FS-Cache client that mounts the cache fleet. */
  readonly fleetClient: string;
  /** The cache node of a one-node fleet that serves its clients NFSv3 (clientNfsVersion: NfsVersion.NFS_V3). */
  readonly v3Node: string;
  /** Its instance tags. */
  readonly v3NodeTags: Record<string, string>;
  /** The name the NFSv3 fleet's clients mount. */
  readonly v3Endpoint: string;
  /** An FS-Cache client of the NFSv3 fleet. */
  readonly v3Client: string;
  /** The cache node of a one-node fleet whose origin is an NFSv3-only server (`NFS3_ORIGIN_USER_DATA`), serving NFSv3 and NFSv4.1. */
  readonly nfs3OriginNode: string;
  /** Its instance tags. */
  readonly nfs3OriginNodeTags: Record<string, string>;
  /** The fsid that fleet renders for its nodes. */
  readonly nfs3OriginFsid: string;
  /** The fsid the fleet renders for every node. */
  readonly fsid: string;
  /** The fleet's export path. */
  readonly exportPath: string;
  /** How many bytes of commands the lab added to the fleet's userData (as many to the fleet client's). */
  readonly userCommandBytes: number;
  /** The synthesized template (the emulator takes the nodes' role policies from it). */
  readonly template: CfnTemplate;
  /** The logical id of the fleet's instance role. */
  readonly nodeRoleId: string;
  /** The logical ids of the fleet's stable interfaces (node 1 first): what the role may attach. */
  readonly nodeInterfaceIds: string[];
  /** An elastic fleet's nodes (issue 32: one Auto Scaling group behind the load balancer): their user data. */
  readonly elasticNode: string;
  /** The tags the elastic fleet's group propagates to its instances (the resource to signal). */
  readonly elasticNodeTags: Record<string, string>;
  /** The logical id of the elastic fleet's nodes' role. */
  readonly elasticRoleId: string;
  /** The tags of the elastic fleet's group itself (the fleet tag its role's lifecycle permission names). */
  readonly elasticGroupTags: Record<string, string>;
}

/** What `labUserData` adds to the fleet for one lab file. */
export interface LabOptions {
  /** An S3 mirror (`Mirror.s3`) of this bucket and prefix on the fleet, its timer's interval 30 min (aws.lab.ts). */
  readonly s3Mirror?: { readonly bucket: string; readonly prefix: string };
  /** ENA Express on the fleet's nodes (`enaExpress`): their stable interface's attach asks for it (aws.lab.ts). */
  readonly enaExpress?: boolean;
}

/**
 * Synthesizes a stack like a user's (an imported file system, a two-node fleet with warming, clients over the
 * origin and over the fleet), with the two settings the lab needs: plain NFSv4.1 (amazon-efs-utils is not
 * available here) and the lab's NVMe model string.
 */
export function labUserData(options: LabOptions = {}): LabUserData {
  const app = newApp();
  const stack = new Stack(app, 'Lab');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const s3Mirror = options.s3Mirror && {
    mirrors: [Mirror.s3(s3.Bucket.fromBucketName(stack, 'MirrorBucket', options.s3Mirror.bucket), options.s3Mirror.prefix)],
    // The lab starts each later sync itself (the unit the timer starts): a sync every few seconds is an aws CLI run
    // each, which under the lab's emulated CPUs slowed every boot beside it by minutes.
    mirroring: { interval: Duration.minutes(30), size: Size.mebibytes(64) },
  };
  const fleet = new CacheFleet(stack, 'Fleet', {
    ...s3Mirror,
    ...(options.enaExpress ? { enaExpress: true } : {}),
    vpc,
    origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }),
    capacity: Capacity.nodes(2),
    clientCidrs: [LAB_SUBNET],
    warming: { paths: ['/efs/warm'], workers: 4 },
    mountTimeout: Duration.seconds(150),
    tuning: { nfsdThreads: 16 },
  });
  // The same fleet settings with a short origin timeout: the scenario that blackholes the origin waits for this one.
  const impatient = new CacheFleet(stack, 'ImpatientFleet', {
    ...s3Mirror, // the same code as the fleet's (aws.lab.ts runs it with the fleet's role, which may fetch only that)
    vpc,
    origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }),
    capacity: Capacity.nodes(1),
    clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(30),
    tuning: { nfsdThreads: 16 },
    fanOut: FanOut.route53({ zoneName: 'impatient.efs-cache.internal' }), // a fleet of its own on the same VPC needs a zone of its own
  });
  const v3Fleet = new CacheFleet(stack, 'V3Fleet', {
    vpc,
    origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }),
    capacity: Capacity.nodes(1),
    clientCidrs: [LAB_SUBNET],
    tuning: { nfsdThreads: 16 },
    clientNfsVersion: NfsVersion.NFS_V3,
    fanOut: FanOut.route53({ zoneName: 'v3.efs-cache.internal' }),
  });
  // An NFS server as the origin (issue 31): NFSv3 only, its mountd at the library's default port; clients over
  // NFSv3 and NFSv4.1.
  const nfs3OriginFleet = new CacheFleet(stack, 'Nfs3OriginFleet', {
    vpc,
    origin: CacheOrigin.nfsServer({
      host: NFS3_ORIGIN_IP, exportPath: NFS3_ORIGIN_EXPORT, nfsVersion: NfsVersion.NFS_V3, peer: ec2.Peer.ipv4(`${NFS3_ORIGIN_IP}/32`),
    }),
    capacity: Capacity.nodes(1),
    clientCidrs: [LAB_SUBNET],
    tuning: { nfsdThreads: 16 },
    clientNfsVersion: NfsVersion.NFS_V3,
    mountTimeout: Duration.seconds(150),
    fanOut: FanOut.route53({ zoneName: 'nfs3.efs-cache.internal' }),
  });
  // An elastic fleet (issue 32): one group of 1 to 4 nodes behind the load balancer (played in aws.lab.ts by IPVS).
  const elasticFleet = new CacheFleet(stack, 'ElasticFleet', {
    vpc,
    origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }),
    fanOut: FanOut.networkLoadBalancer(),
    capacity: Capacity.elastic({ minNodes: 1, maxNodes: 4 }),
    clientCidrs: [LAB_SUBNET],
    tuning: { nfsdThreads: 16 },
    mountTimeout: Duration.seconds(150),
  });
  const v3Client = new FsCacheClientLaunchTemplate(stack, 'V3Client', {
    vpc, source: MountSource.cacheFleet(v3Fleet), diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }),
    mountTimeout: Duration.seconds(180),
  });
  const originClient = new FsCacheClientLaunchTemplate(stack, 'OriginClient', {
    vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS,
    diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }), mountTimeout: Duration.seconds(180),
  });
  const fleetClient = new FsCacheClientLaunchTemplate(stack, 'FleetClient', {
    vpc, source: MountSource.cacheFleet(fleet), diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }),
    mountTimeout: Duration.seconds(180),
  });
  // A step of the user's own on each template: it records when it ran and what the bootstrap had left by then.
  fleet.userData.addCommands(`echo "$(date +%s.%N) exports=$(exportfs | grep -c "^/efs")" > ${USER_STEP_LOG}`, ...longUserStep());
  fleetClient.userData.addCommands(`echo "$(date +%s.%N) fstype=$(findmnt -no FSTYPE /mnt/efs)" > ${USER_STEP_LOG}`, ...longUserStep());
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const values = PSEUDO_VALUES;
  const ud = (lt: ec2.LaunchTemplate) =>
    resolveUserData(template, stack.getLogicalId(lt.node.defaultChild as ec2.CfnLaunchTemplate), values as IntrinsicValues);
  // The tags each node's group puts on its instances, as the lab's metadata service serves them. The stable
  // interface is attached through the EC2 API on AWS; in the lab a node keeps its own address, so that tag is left out.
  const groupTags = (group: CfnResource) => (template.Resources ?? {})[stack.getLogicalId(group)].Properties?.Tags as
    Array<{ Key: string; Value: unknown; PropagateAtLaunch: boolean }>;
  const tagsOf = (node: { autoScalingGroup: CacheFleet['nodes'][number]['autoScalingGroup'] }) =>
    Object.fromEntries(groupTags(node.autoScalingGroup.node.defaultChild as CfnResource)
      .filter((t) => t.PropagateAtLaunch && typeof t.Value === 'string' && t.Key !== 'cdk-efs-cache:stable-eni')
      .map((t) => [t.Key, t.Value as string]));
  return {
    cacheNode: ud(fleet.launchTemplate),
    nodeTags: fleet.nodes.map(tagsOf),
    impatientNode: ud(impatient.launchTemplate),
    impatientNodeTags: tagsOf(impatient.nodes[0]),
    originClient: ud(originClient.launchTemplate),
    fleetClient: ud(fleetClient.launchTemplate),
    v3Node: ud(v3Fleet.launchTemplate),
    v3NodeTags: tagsOf(v3Fleet.nodes[0]),
    v3Endpoint: v3Fleet.endpoint,
    v3Client: ud(v3Client.launchTemplate),
    nfs3OriginNode: ud(nfs3OriginFleet.launchTemplate),
    nfs3OriginNodeTags: tagsOf(nfs3OriginFleet.nodes[0]),
    nfs3OriginFsid: nfs3OriginFleet.fsid,
    fsid: fleet.fsid,
    exportPath: fleet.exportPath,
    userCommandBytes: Buffer.byteLength(fleet.userData.render()),
    template,
    nodeRoleId: stack.getLogicalId(fleet.role.node.defaultChild as CfnResource),
    nodeInterfaceIds: fleet.nodes.map((n) => stack.getLogicalId((n as CacheNode).networkInterface!)),
    elasticNode: ud(elasticFleet.launchTemplate),
    elasticNodeTags: tagsOf({ autoScalingGroup: elasticFleet.autoScalingGroup! }),
    elasticRoleId: stack.getLogicalId(elasticFleet.role.node.defaultChild as CfnResource),
    elasticGroupTags: Object.fromEntries(groupTags(elasticFleet.autoScalingGroup!.node.defaultChild as CfnResource)
      .filter((t) => typeof t.Value === 'string').map((t) => [t.Key, t.Value as string])),
  };
}

/**
 * An origin standing in for EFS: kernel nfsd exporting /srv/efs over NFSv4.1 only, read-write, like EFS, and, like
 * EFS, granting no delegations (fs.leases-enable=0 before nfsd starts: a stock nfsd hands out read delegations, with
 * which a client skips most of the origin's work on its own and every baseline would flatter the wrong side).
 */
export const ORIGIN_USER_DATA = `#!/bin/bash
set -euo pipefail
sysctl -w fs.leases-enable=0
mkdir -p /srv/efs/warm /srv/efs/data
nfsconf --set nfsd vers3 n
nfsconf --set nfsd vers4.0 n
nfsconf --set nfsd vers4.2 n
nfsconf --set nfsd threads 16
printf '/srv/efs ${LAB_SUBNET}(rw,sync,fsid=0,no_subtree_check,no_root_squash,insecure)\\n' > /etc/exports
systemctl enable --now nfs-server
exportfs -ra
`;

/** The NFSv3-only origin's address and export (`NFS3_ORIGIN_USER_DATA`). */
export const NFS3_ORIGIN_IP = '10.77.0.12';
export const NFS3_ORIGIN_EXPORT = '/srv/nfs3';

/**
 * An NFS server that is not EFS (issue 31): kernel nfsd exporting /srv/nfs3 over NFSv3 only (NFSv4 turned off),
 * rpc.mountd pinned at 20048 (the library's default \`mountport\`), rpcbind running as a NAS's would.
 */
export const NFS3_ORIGIN_USER_DATA = `#!/bin/bash
set -euo pipefail
mkdir -p ${NFS3_ORIGIN_EXPORT}/data
nfsconf --set nfsd vers3 y
nfsconf --set nfsd vers4 n
nfsconf --set nfsd threads 8
nfsconf --set mountd port 20048
printf '${NFS3_ORIGIN_EXPORT} ${LAB_SUBNET}(rw,sync,no_subtree_check,no_root_squash,insecure)\\n' > /etc/exports
systemctl enable --now rpcbind.socket nfs-server
exportfs -ra
`;
