/**
 * EksFleetNodes' user data as an EKS node's own programs read it: nodeadm (built from the Go module proxy by
 * nodeadm.sh) reads it from a metadata service, as nodeadm-config.service does before cloud-init runs, and checks the
 * NodeConfig it finds in the MIME document (`nodeadm config check`); Python's email parser, which cloud-init splits
 * user data with, finds the script parts in the order cloud-init runs them. nodeadm here is the version the module
 * proxy serves (February 2024), whose check decodes the document without `nodeadm init`'s field checks; the nodes run
 * the one of their image. Starting the kubelet, and the gate holding it back, are proved only on AWS.
 */
import { spawn, spawnSync } from 'child_process';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import { App, CfnParameter, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { CacheFleet, CacheOrigin, EksFleetNodes, FsCacheClientLaunchTemplate, MountSource } from '../../../lib';
import { eksNodeGate } from '../../../lib/client/fs-cache-client';
import { EKS_MIME_BOUNDARY } from '../../../lib/containers/eks-user-data';
import { importedFs } from '../../util';
import { cloudInitParts, launchTemplateUserData } from '../../util/user-data';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENDPOINT = 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com';
const AUTHORITY = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n').toString('base64');

/**
 * A stack of EKS nodes of a cluster of its own app; their user data with the cluster's deploy-time values given. With
 * `fleetEndpoint`, the nodes are clients of a fleet imported with its endpoint as a parameter, which holds that value.
 */
function nodesUserData(fleetEndpoint?: string): string {
  const app = new App();
  const stack = new Stack(app, 'Eks', { env: { account: '123456789012', region: 'us-east-1' } });
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
  const fleet = fleetEndpoint === undefined ? new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) })
    : CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: new CfnParameter(stack, 'FleetEndpoint').valueAsString,
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'),
    });
  const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'),
    machineImage: EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.ARM_64),
  });
  const cluster = new eks.Cluster(stack, 'Cluster', {
    vpc, version: eks.KubernetesVersion.V1_33, defaultCapacity: 0, authenticationMode: eks.AuthenticationMode.API,
    kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
  });
  hosts.userData.addCommands('echo "the user\'s own command"');
  new EksFleetNodes(stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: '172.20.0.0/16' });
  const id = stack.getLogicalId(cluster.node.findChild('Resource').node.defaultChild as any);
  const values: Record<string, string> = {
    [`Ref:${id}`]: 'apps', [`Fn::GetAtt:${id}.Endpoint`]: ENDPOINT, [`Fn::GetAtt:${id}.CertificateAuthorityData`]: AUTHORITY,
    ...(fleetEndpoint === undefined ? {} : { 'Ref:FleetEndpoint': fleetEndpoint }),
  };
  return Object.entries(launchTemplateUserData(stack, (k) => values[k] ?? `<${k}>`)).find(([lt]) => lt.startsWith('Hosts'))![1];
}

/** A metadata service that serves `userData` (IMDSv2: a token first), as nodeadm's client asks for it. */
async function metadataService(userData: string): Promise<{ url: string; requests: string[]; close: () => void }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      // The token's lifetime is echoed, as the metadata service does; without it the client falls back to IMDSv1.
      res.setHeader('X-Aws-Ec2-Metadata-Token-Ttl-Seconds', String(req.headers['x-aws-ec2-metadata-token-ttl-seconds'] ?? '21600'));
      res.end('token-1');
      return;
    }
    if (req.method === 'GET' && req.url === '/latest/user-data' && req.headers['x-aws-ec2-metadata-token'] === 'token-1') {
      res.end(userData);
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => server.close() };
}

/** `nodeadm config check` against a metadata service serving `userData`. */
async function nodeadmCheck(nodeadm: string, userData: string): Promise<{ status: number | null; output: string; requests: string[] }> {
  const imds = await metadataService(userData);
  try {
    const child = spawn(nodeadm, ['config', 'check'], {
      env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, output, requests: imds.requests };
  } finally {
    imds.close();
  }
}

describe('an EKS node\'s user data, read by nodeadm and split as cloud-init splits it', () => {
  const userData = nodesUserData();
  let nodeadm: string;

  beforeAll(() => {
    const built = spawnSync('bash', [path.join(__dirname, 'nodeadm.sh')], { encoding: 'utf8', cwd: ROOT });
    if (built.status !== 0) throw new Error(`nodeadm.sh failed: ${built.stderr}`);
    nodeadm = built.stdout.trim();
  });

  test('nodeadm finds the NodeConfig in the MIME document and decodes it', async () => {
    const r = await nodeadmCheck(nodeadm, userData);
    expect(r.output).toContain('Configuration is valid');
    expect(r.status).toBe(0);
    expect(r.requests).toEqual(['PUT /latest/api/token', 'GET /latest/user-data']);
  });

  // This nodeadm's `config check` decodes the NodeConfig into its typed form (kind, group, version, field types: the
  // authority must be base64) without the field checks `nodeadm init` adds (name, endpoint, authority and CIDR present):
  // the unit test (test/containers/eks-fleet-nodes.test.ts) holds the four fields to their exact text.
  test('controls: the same document with the part mislabelled, a misspelt kind or an authority that is not base64 is refused', async () => {
    const refused = async (changed: string, message: RegExp) => {
      expect(changed).not.toBe(userData);
      const r = await nodeadmCheck(nodeadm, changed);
      expect(r.status).not.toBe(0);
      expect(r.output).toMatch(message);
    };
    await refused(userData.replace('Content-Type: application/node.eks.aws', 'Content-Type: text/plain'), /could not find NodeConfig/i);
    await refused(userData.replace('kind: NodeConfig', 'kind: NodeConfigs'), /NodeConfigs/);
    await refused(userData.replace(`certificateAuthority: "${AUTHORITY}"`, 'certificateAuthority: "not base64!"'), /base64/i);
  });

  // A parameter the nodes' bootstrap reads (the fleet's endpoint) holding a boundary, a quote and a YAML key: it reaches
  // the document as base64 only, and nodeadm reads the same NodeConfig.
  test('a parameter that holds the boundary and YAML leaves the NodeConfig as nodeadm reads it', async () => {
    for (const boundary of [EKS_MIME_BOUNDARY, '==cdk-efs-cache-eks-node==']) {
      const hostile = `x"\n    flags: ["--pwned"]\n--${boundary}\nContent-Type: application/node.eks.aws\n\nkind: NodeConfigs\n`;
      const doc = nodesUserData(hostile);
      expect(cloudInitParts(doc).map((p) => p.type)).toEqual(['application/node.eks.aws', 'text/x-shellscript', 'text/x-shellscript']);
      const r = await nodeadmCheck(nodeadm, doc);
      expect(r.output).toContain('Configuration is valid');
      expect(r.status).toBe(0);
    }
  });

  test('cloud-init\'s parser: the NodeConfig, then the bootstrap, then the gate, each whole', () => {
    const parts = cloudInitParts(userData);
    expect(parts.map((p) => [p.type, p.file])).toEqual([
      ['application/node.eks.aws', null],
      ['text/x-shellscript', '10-efs-cache-client.sh'],
      ['text/x-shellscript', '20-efs-cache-eks-node-gate.sh'],
    ]);
    expect(parts[0].body).toContain(`    apiServerEndpoint: "${ENDPOINT}"\n`);
    expect(parts[1].body.startsWith('#!/bin/bash\nset -euo pipefail\n')).toBe(true);
    expect(parts[1].body).toMatch(/echo "the user's own command"\n[^]*touch \/run\/efs-cache\/eks-node-ready; fi\n$/);
    expect(parts[2].body).toBe(eksNodeGate());
    // The bootstrap's part is bash that parses.
    expect(spawnSync('bash', ['-n'], { input: parts[1].body, encoding: 'utf8' }).status).toBe(0);
  });
});
