import * as fs from 'fs';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CachedFileSystem, CacheFleet, CacheOrigin, Capacity, DataSeeder, EcsFleetCapacity, EksFleetNodes, FanOut, FsCacheClientLaunchTemplate, Mirror,
  MountSource, NfsVersion, NodeDiskCache, SeedSource,
} from '../lib';
import { importedFs, stackWithVpc } from './util';
import { flatten } from './util/user-data';

/*
 * docs/CONTRACT.md is checked against what the constructs render: every `EFSC_*` parameter of the user data of every
 * surface (fleets fixed and elastic, with path and S3 mirrors, NFSv3 and the disk cache; a client with mirrors and
 * warming; the seeder; ECS and EKS hosts) is named there, and every name there is rendered by some surface or listed
 * in its section of names the scripts read that no surface renders.
 */
const REPO = path.join(__dirname, '..');
const CONTRACT = fs.readFileSync(path.join(REPO, 'docs', 'CONTRACT.md'), 'utf8');
const UNRENDERED_HEADING = '## Read by the scripts, never rendered';

/** The `EFSC_*` names of the header lines of every user data in the stack (launch templates and instances). */
function renderedNames(stack: Stack): string[] {
  const names = new Set<string>();
  const t = Template.fromStack(stack).toJSON();
  for (const r of Object.values<any>(t.Resources)) {
    const ud = r.Properties?.LaunchTemplateData?.UserData ?? r.Properties?.UserData;
    if (!ud) continue;
    for (const m of flatten(ud, (k) => `<${k}>`).matchAll(/^(EFSC_[A-Z0-9_]+)=/gm)) names.add(m[1]);
  }
  return [...names];
}

/** Every surface, in as many of its configurations as render different parameters. */
function surfaces(): string[] {
  const names = new Set<string>();
  const add = (stack: Stack) => renderedNames(stack).forEach((n) => names.add(n));
  {
    const { stack, vpc } = stackWithVpc();
    const site = Mirror.s3(s3.Bucket.fromBucketName(stack, 'Site', 'efsc-site-data'), 'site/', { name: 'web' });
    new CachedFileSystem(stack, 'Data', {
      vpc,
      cacheFleet: {
        fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4 }),
        mirrors: [Mirror.path('/efs/site'), site], mirroring: { changeMarker: '.published' }, warming: { paths: ['/efs/warm'] },
      },
    });
    add(stack);
  }
  {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.nfsServer({ host: '10.20.0.5', exportPath: '/srv/data', peer: ec2.Peer.ipv4('10.20.0.0/16'), nfsVersion: NfsVersion.NFS_V3 }),
      clientNfsVersion: NfsVersion.NFS_V3, nodeDiskCache: NodeDiskCache.instanceStore(), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      mirrors: [Mirror.path('/efs/site')],
    });
    new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/site'] }), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      warming: { paths: ['/mnt/efs/x'] },
    });
    new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: SeedSource.s3(s3.Bucket.fromBucketName(stack, 'B', 'efsc-seed-data'), 'p/') });
    add(stack);
  }
  {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), enaExpress: true });
    const ecsHosts = new FsCacheClientLaunchTemplate(stack, 'EcsHosts', {
      vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM),
    });
    new EcsFleetCapacity(stack, 'Capacity', { cluster: new ecs.Cluster(stack, 'Cluster', { vpc }), hosts: ecsHosts });
    const eksHosts = new FsCacheClientLaunchTemplate(stack, 'EksHosts', {
      vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      machineImage: EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.ARM_64),
    });
    const cluster = eks.Cluster.fromClusterAttributes(stack, 'Eks', {
      clusterName: 'apps', vpc, clusterEndpoint: 'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com',
      clusterCertificateAuthorityData: 'Q0FEQVRB', clusterSecurityGroupId: 'sg-0123456789abcdef0',
      kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
    });
    new EksFleetNodes(stack, 'Nodes', { cluster, hosts: eksHosts, serviceIpv4Cidr: '172.20.0.0/16' });
    add(stack);
  }
  return [...names].sort();
}

/** The EFSC_* names of a text, without patterns such as EFSC_MIRROR_S3_*. */
function namesIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\bEFSC_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*[*$])/g)].map((m) => m[0]))].sort();
}

function assetScripts(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? assetScripts(p) : e.name.endsWith('.sh') ? [p] : [];
  });
}

const rendered = surfaces();
const unrendered = namesIn(CONTRACT.slice(CONTRACT.indexOf(UNRENDERED_HEADING)).split(/\n## /)[0]);

test('the surfaces render parameters (the collection finds them)', () => {
  expect(rendered).toEqual(expect.arrayContaining(['EFSC_CODE_SHA256', 'EFSC_MIRROR_S3_NAMES', 'EFSC_LIFECYCLE_LAUNCH_HOOK', 'EFSC_SOURCE_KIND']));
  expect(CONTRACT).toContain(UNRENDERED_HEADING);
});

test('docs/CONTRACT.md names every parameter that some surface renders', () => {
  expect(rendered.filter((n) => !namesIn(CONTRACT).includes(n))).toEqual([]);
});

test('every parameter docs/CONTRACT.md names is rendered by some surface, or listed as never rendered (and not rendered)', () => {
  expect(namesIn(CONTRACT).filter((n) => !rendered.includes(n) && !unrendered.includes(n))).toEqual([]);
  expect(unrendered.filter((n) => rendered.includes(n))).toEqual([]);
});

test('every EFSC_* name the scripts read is rendered by some surface or listed as never rendered', () => {
  const read = namesIn(assetScripts(path.join(REPO, 'assets')).map((f) => fs.readFileSync(f, 'utf8')).join('\n'));
  expect(read.filter((n) => !rendered.includes(n) && !unrendered.includes(n))).toEqual([]);
});
