import { Annotations, Tags, Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { eksAl2023ImageParameter, eksImageKind } from '../instance/image';
import { estimatedUserDataBytes } from '../instance/user-data';
import { describeValue, knownAtSynth, propError } from '../private/errors';
import { nagText } from '../private/nag';
import { ClusterHostsOptions, clusterHostGroup } from './cluster-hosts';
import { joinEksCluster } from './cluster-join';
import { resourceAttributeOf } from './fleet-export';

/** Properties of `EksFleetNodes`. */
export interface EksFleetNodesProps extends ClusterHostsOptions {
  /**
   * The EKS cluster the nodes join, of this app (`eks.Cluster`, `eks.CfnCluster`) or imported with literal attributes.
   * An imported one gives `vpc`, `clusterEndpoint`, `clusterCertificateAuthorityData` and `clusterSecurityGroupId`
   * as literals (a parameter or an import is refused) and uses access entries (authentication mode `API` or
   * `API_AND_CONFIG_MAP`).
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md#the-nodeconfigs-values
   */
  readonly cluster: eks.ICluster;

  /**
   * The nodes' launch template: FS-Cache clients on the cluster version's `EksFleetNodes.amazonLinux2023Image(...)`.
   * Its cachefilesd keeps the disk cache of the `fsc` mounts the kubelet makes for `EksFleetVolume` claims.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
   */
  readonly hosts: FsCacheClientLaunchTemplate;

  /**
   * The cluster's Kubernetes service CIDR, a literal (`aws eks describe-cluster --query cluster.kubernetesNetworkConfig.serviceIpv4Cidr`).
   * The kubelet's cluster DNS address is derived from it; EKS picks `10.100.0.0/16` or `172.20.0.0/16` when
   * the cluster's `serviceIpv4Cidr` is not set.
   */
  readonly serviceIpv4Cidr: string;
}

/**
 * Bytes a deploy-time certificate authority is taken to need in the NodeConfig: EKS's cluster CA is a 2048-bit RSA
 * certificate, whose PEM (about 1,500 bytes) is base64-encoded again in `certificateAuthority` (about 2,000 bytes).
 */
const AUTHORITY_SIZE_ESTIMATE = 2200;

/** The first Kubernetes minor version EKS built Amazon Linux 2023 images (with nodeadm) for. */
const FIRST_AL2023_MINOR = 23;

/** The resources whose attributes are an EKS cluster's as EKS writes them: aws-eks' cluster (`eks.Cluster`) and the L1. */
const EKS_CLUSTER_TYPES = ['AWS::EKS::Cluster', 'Custom::AWSCDK-EKS-Cluster'];

/**
 * The cluster's values in the NodeConfig: each a literal of its format (checked at synth) or the attribute of an EKS
 * cluster of the app it names (`Ref` is the cluster's name), whose format is EKS's. Neither holds a `"`, a `\\`, a
 * line break, a `,` or a space, so none leaves its double-quoted scalar or reproduces the MIME boundary.
 */
const NODE_CONFIG_FIELDS = [
  { key: 'name', attribute: 'clusterName', cfnAttribute: 'Ref', pattern: /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/,
    format: 'an EKS cluster name (1-100 letters, digits, - and _, starting with a letter or digit)', query: 'name' },
  { key: 'apiServerEndpoint', attribute: 'clusterEndpoint', cfnAttribute: 'Endpoint',
    pattern: /^https:\/\/[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:[0-9]{1,5})?\/?$/,
    format: 'an https URL of a host name or address (such as \'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com\')', query: 'endpoint' },
  { key: 'certificateAuthority', attribute: 'clusterCertificateAuthorityData', cfnAttribute: 'CertificateAuthorityData',
    pattern: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, format: 'base64 (as EKS gives it)', query: 'certificateAuthority.data' },
] as const;

/** The service CIDRs EKS picks when a cluster is created without one. */
const EKS_DEFAULT_SERVICE_CIDRS = ['10.100.0.0/16', '172.20.0.0/16'];

/** The AWS managed policies of an EKS node's role, as EKS documents them for self-managed nodes. */
const NODE_POLICIES: Array<[name: string, reason: string]> = [
  ['AmazonEKSWorkerNodePolicy', 'the kubelet\'s own calls (describe the node and the cluster), as EKS documents for every node role'],
  ['AmazonEKS_CNI_Policy', 'the VPC CNI plugin on the node assigns pod addresses (unless the cluster gives aws-node a role of its own)'],
  ['AmazonEC2ContainerRegistryReadOnly', 'the kubelet pulls images from ECR (EKS\'s own add-ons among them)'],
];

/**
 * Self-managed EKS nodes built from an `FsCacheClientLaunchTemplate`: an Auto Scaling group registered with the cluster.
 * Their kubelet starts only once their FS-Cache bootstrap succeeded.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
 */
export class EksFleetNodes extends Construct {
  /**
   * The EKS-optimized Amazon Linux 2023 image of a Kubernetes version, by its public SSM parameter.
   * The parameter is read when the stack deploys.
   *
   * @param kubernetesVersion the cluster's Kubernetes version, for example '1.33' (1.23 or later)
   * @param architecture the instance type's architecture
   */
  public static amazonLinux2023Image(kubernetesVersion: string, architecture: ec2.InstanceArchitecture): ec2.IMachineImage {
    // It names the image's SSM parameter, whose ARN aws-cdk-lib builds at synth: a token fails there naming no prop.
    if (Token.isUnresolved(kubernetesVersion)) {
      throw propError(undefined, 'kubernetesVersion', `must be known at synth (it names the image's SSM parameter), got ${describeValue(kubernetesVersion)}. ` +
        'Give the cluster\'s version as a literal (eks.KubernetesVersion.V1_33.version).');
    }
    const minor = /^1\.(0|[1-9][0-9]{0,2})$/.exec(kubernetesVersion);
    if (!minor || Number(minor[1]) < FIRST_AL2023_MINOR) {
      throw propError(undefined, 'kubernetesVersion', `must be a Kubernetes version of EKS's Amazon Linux 2023 images, 1.${FIRST_AL2023_MINOR} ` +
        `or later, written as EKS writes it (for example '1.33', no leading zero, no patch), got ${describeValue(kubernetesVersion)}. ` +
        'Give the cluster\'s version (eks.KubernetesVersion.V1_33.version).');
    }
    return ec2.MachineImage.fromSsmParameter(eksAl2023ImageParameter(kubernetesVersion, architecture));
  }

  /** The nodes' Auto Scaling group. */
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;

  constructor(scope: Construct, id: string, props: EksFleetNodesProps) {
    super(scope, id);
    if (!(props.hosts instanceof FsCacheClientLaunchTemplate)) throw propError(this, 'hosts', 'must be an FsCacheClientLaunchTemplate.');
    const cluster = props.cluster;
    const attribute = <T>(name: string, get: () => T): T => {
      try {
        return get();
      } catch {
        throw propError(this, 'cluster', `${cluster.node.path} has no ${name}: nodes cannot join it without one. Give ` +
          `eks.Cluster.fromClusterAttributes a ${name}.`);
      }
    };
    const vpc = attribute('vpc', () => cluster.vpc);
    const endpoint = attribute('clusterEndpoint', () => cluster.clusterEndpoint);
    const authority = attribute('clusterCertificateAuthorityData', () => cluster.clusterCertificateAuthorityData);
    const clusterSecurityGroup = attribute('clusterSecurityGroupId', () => cluster.clusterSecurityGroup);
    const values = { clusterName: cluster.clusterName, clusterEndpoint: endpoint, clusterCertificateAuthorityData: authority };
    for (const field of NODE_CONFIG_FIELDS) checkNodeConfigValue(this, field, values[field.attribute]);
    checkCidr(this, props.serviceIpv4Cidr, cluster);
    checkNodeImage(this, props.hosts);

    const nodeConfig = nodeConfigOf(values, props.serviceIpv4Cidr);
    // A deploy-time certificate authority is counted as an EKS cluster's is long (base64 of a PEM certificate).
    const authorityBytes = Token.isUnresolved(authority) ? AUTHORITY_SIZE_ESTIMATE : Buffer.byteLength(authority, 'utf8');
    joinEksCluster(props.hosts, cluster.node.path, nodeConfig,
      estimatedUserDataBytes(nodeConfig.replace(authority, '')) + authorityBytes);
    // The cluster security group, as managed node groups have it: it lets the control plane and the cluster's other
    // nodes and pods reach these nodes, and them reach the control plane. The hosts' own group keeps the fleet's rules.
    props.hosts.launchTemplate.addSecurityGroup(clusterSecurityGroup);

    this.autoScalingGroup = clusterHostGroup(this, vpc, props.hosts, props,
      'The nodes\' scaling is the cluster\'s (Cluster Autoscaler or Karpenter) and shows in Kubernetes events, not a topic.');
    // aws-cdk-lib tags self-managed nodes so: the VPC CNI and the cloud provider find the cluster's instances by it.
    Tags.of(this.autoScalingGroup).add(`kubernetes.io/cluster/${cluster.clusterName}`, 'owned', { applyToLaunchedInstances: true });

    grantNodeAccess(this, cluster, props.hosts.role);
  }
}

/**
 * nodeadm's NodeConfig, YAML in the user data's MIME document. CloudFormation splices a deploy-time value as it is
 * (it has no quoting), so every value here is a literal checked at synth or an attribute EKS writes: none holds a
 * `"`, a line break or the document's boundary, and each stays the whole of its double-quoted scalar.
 */
function nodeConfigOf(values: Record<(typeof NODE_CONFIG_FIELDS)[number]['attribute'], string>, serviceIpv4Cidr: string): string {
  return [
    '---',
    'apiVersion: node.eks.aws/v1alpha1',
    'kind: NodeConfig',
    'spec:',
    '  cluster:',
    ...NODE_CONFIG_FIELDS.map((f) => `    ${f.key}: "${values[f.attribute]}"`),
    `    cidr: "${serviceIpv4Cidr}"`,
    '',
  ].join('\n');
}

/**
 * The nodes' role: EKS's node policies, and its access to the cluster: an EC2_LINUX access entry (the kubelet's
 * system:nodes group) where the cluster uses access entries, the aws-auth ConfigMap of a cluster of this app that uses
 * it alone.
 */
function grantNodeAccess(scope: Construct, cluster: eks.ICluster, role: iam.IRole): void {
  for (const [name, reason] of NODE_POLICIES) {
    const policy = iam.ManagedPolicy.fromAwsManagedPolicyName(name);
    role.addManagedPolicy(policy);
    Validations.of(role).acknowledge({ id: `AwsSolutions-IAM4[Policy::${nagText(role, policy.managedPolicyArn)}]`, reason });
  }
  const configMapOnly = cluster instanceof eks.Cluster &&
    (cluster.authenticationMode === undefined || cluster.authenticationMode === eks.AuthenticationMode.CONFIG_MAP);
  if (configMapOnly) {
    cluster.awsAuth.addRoleMapping(role, { username: 'system:node:{{EC2PrivateDNSName}}', groups: ['system:bootstrappers', 'system:nodes'] });
  } else {
    new eks.CfnAccessEntry(scope, 'AccessEntry', { clusterName: cluster.clusterName, principalArn: role.roleArn, type: 'EC2_LINUX' });
  }
}

/**
 * Throws `Invalid cluster` for a NodeConfig value that is neither a literal of its format nor the attribute of an EKS
 * cluster of the app: a parameter, an import or an SSM value could hold a `"`, a line break or the MIME boundary, and
 * CloudFormation would splice it into the YAML as it is.
 */
function checkNodeConfigValue(scope: Construct, field: typeof NODE_CONFIG_FIELDS[number], value: string): void {
  const lookUp = `aws eks describe-cluster --name <name> --query cluster.${field.query}`;
  if (!Token.isUnresolved(value)) {
    if (field.pattern.test(value)) return;
    throw propError(scope, 'cluster', `its ${field.attribute} must be ${field.format}, got ${describeValue(value)}. Give the cluster's own (${lookUp}).`);
  }
  const source = resourceAttributeOf(value);
  if (source && EKS_CLUSTER_TYPES.includes(source.resourceType) && source.attribute === field.cfnAttribute) return;
  throw propError(scope, 'cluster', `its ${field.attribute} is ${describeValue(value, scope)}, which nodeadm would read in the NodeConfig's YAML ` +
    'of the user data, where CloudFormation splices a value as it is: a quote or a line break in it would change the NodeConfig, the ' +
    'MIME boundary would end it. Give an EKS cluster of this app (eks.Cluster, or the attributes of an eks.CfnCluster), whose ' +
    `${field.attribute} EKS writes, or the value as a literal, checked at synth (${lookUp}).`);
}

/**
 * Throws `Invalid serviceIpv4Cidr` for what EKS would not have as a service CIDR (a literal block of 10.0.0.0/8,
 * 172.16.0.0/12 or 192.168.0.0/16, /12 to /24, without host bits), or for a CIDR other than that of the app's own
 * cluster (its `serviceIpv4Cidr`, or one of EKS's two defaults when it sets none).
 */
function checkCidr(scope: Construct, cidr: string, cluster: eks.ICluster): void {
  knownAtSynth(scope, 'serviceIpv4Cidr', cidr, 'nodeadm reads it in the NodeConfig\'s YAML, where CloudFormation cannot quote a deploy-time value');
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  const octets = m ? m.slice(1, 5).map(Number) : [];
  if (!m || octets.some((o, i) => o > 255 || String(o) !== m[i + 1]) || Number(m[5]) > 32) {
    throw propError(scope, 'serviceIpv4Cidr', `must be the cluster's IPv4 service CIDR block, such as '10.100.0.0/16', got ${describeValue(cidr)}.`);
  }
  const bits = Number(m[5]);
  const address = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  const within = (base: number, prefix: number) => (address >>> (32 - prefix)) === (base >>> (32 - prefix)) && bits >= prefix;
  const privateBlock = within(0x0a000000, 8) || within(0xac100000, 12) || within(0xc0a80000, 16);
  if (bits < 12 || bits > 24 || !privateBlock) {
    throw propError(scope, 'serviceIpv4Cidr', `must be a block EKS takes as a service CIDR, /12 to /24 within 10.0.0.0/8, 172.16.0.0/12 or ` +
      `192.168.0.0/16, got ${describeValue(cidr)}. Give the cluster's own (aws eks describe-cluster --name <name> --query ` +
      'cluster.kubernetesNetworkConfig.serviceIpv4Cidr).');
  }
  const hostBits = bits === 32 ? 0 : (address << bits) >>> 0;
  if (hostBits !== 0) {
    const network = (address >>> (32 - bits)) << (32 - bits) >>> 0;
    const text = [24, 16, 8, 0].map((s) => (network >>> s) & 255).join('.');
    throw propError(scope, 'serviceIpv4Cidr', `${describeValue(cidr)} has host bits set: EKS names the block by its first address, ` +
      `'${text}/${bits}'.`);
  }
  const own = ownServiceCidr(cluster);
  if (own === undefined) return;
  const expected = own === 'default' ? EKS_DEFAULT_SERVICE_CIDRS : [own];
  if (!expected.includes(cidr)) {
    throw propError(scope, 'serviceIpv4Cidr', `is ${describeValue(cidr)}, but ${cluster.node.path} ` + (own === 'default'
      ? `sets no serviceIpv4Cidr, so EKS gives it ${EKS_DEFAULT_SERVICE_CIDRS.map((c) => `'${c}'`).join(' or ')}: give the one it ` +
        'has (aws eks describe-cluster --name <name> --query cluster.kubernetesNetworkConfig.serviceIpv4Cidr).'
      : `has serviceIpv4Cidr '${own}': give the same, or the kubelet's cluster DNS address is not the cluster's.`));
  }
}

/**
 * The service CIDR of an EKS cluster of the app, as its template gives it: the block, `default` when it sets none (EKS
 * then picks one of `EKS_DEFAULT_SERVICE_CIDRS`), or undefined for a cluster that is not of the app or whose block is
 * a token.
 */
function ownServiceCidr(cluster: eks.ICluster): string | undefined {
  const source = Token.isUnresolved(cluster.clusterName) ? resourceAttributeOf(cluster.clusterName) : undefined;
  if (!source || !EKS_CLUSTER_TYPES.includes(source.resourceType)) return undefined;
  // The resource's properties as given (aws-eks' cluster keeps EKS's CreateCluster request under `Config`).
  const props = (source.resource as unknown as { _cfnProperties?: Record<string, any> })._cfnProperties ?? {};
  const network = source.resourceType === 'AWS::EKS::Cluster' ? props.kubernetesNetworkConfig : props.Config?.kubernetesNetworkConfig;
  if (network !== undefined && (typeof network !== 'object' || Token.isUnresolved(network))) return undefined;
  if (network?.ipFamily !== undefined && network.ipFamily !== 'ipv4') return undefined;
  const cidr = network?.serviceIpv4Cidr;
  if (cidr === undefined) return 'default';
  return typeof cidr === 'string' && !Token.isUnresolved(cidr) ? cidr : undefined;
}

/**
 * Refuses hosts whose image is known not to be an EKS-optimized Amazon Linux 2023 image (no nodeadm or kubelet: the
 * instances would never join), and warns where the image cannot be read at synth.
 */
function checkNodeImage(scope: Construct, hosts: FsCacheClientLaunchTemplate): void {
  const image = hosts._machineImage;
  const use = 'Give it machineImage: EksFleetNodes.amazonLinux2023Image(<the cluster\'s Kubernetes version>, <the instance type\'s architecture>).';
  if (image === undefined) {
    throw propError(scope, 'hosts', `${hosts.node.path} runs Amazon Linux 2023 without nodeadm or the kubelet (machineImage unset): its ` +
      `instances would never join the cluster. ${use}`);
  }
  const kind = eksImageKind(image);
  if (kind === 'other') {
    throw propError(scope, 'hosts', `${hosts.node.path}'s image is not an EKS-optimized Amazon Linux 2023 image (nodeadm reads the ` +
      `user data's NodeConfig on those only): its instances would never join the cluster. ${use}`);
  }
  if (kind === undefined) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:eksNodeImage', `${hosts.node.path}'s image is not known here: its instances join ` +
      'the cluster only if it is an EKS-optimized Amazon Linux 2023 image (nodeadm reads the NodeConfig of their user data).');
  }
}
