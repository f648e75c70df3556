import { Annotations, Tags, Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { eksAl2023ImageParameter, eksImageKind } from '../instance/image';
import { estimatedUserDataBytes } from '../instance/user-data';
import { propError } from '../private/errors';
import { nagText } from '../private/nag';
import { ClusterHostsOptions, clusterHostGroup } from './cluster-hosts';

/** Properties of `EksFleetNodes`. */
export interface EksFleetNodesProps extends ClusterHostsOptions {
  /**
   * The EKS cluster the nodes join. An imported cluster (`eks.Cluster.fromClusterAttributes`) must give `vpc`,
   * `clusterEndpoint`, `clusterCertificateAuthorityData` and `clusterSecurityGroupId`, and use access entries
   * (authentication mode `API` or `API_AND_CONFIG_MAP`).
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
   * The cluster's Kubernetes service CIDR (`aws eks describe-cluster --query cluster.kubernetesNetworkConfig.serviceIpv4Cidr`):
   * the kubelet's cluster DNS address is derived from it. EKS picks `10.100.0.0/16` or `172.20.0.0/16` when the cluster's
   * `serviceIpv4Cidr` is not set.
   */
  readonly serviceIpv4Cidr: string;
}

/**
 * Bytes a deploy-time certificate authority is taken to need in the NodeConfig: EKS's cluster CA is a 2048-bit RSA
 * certificate, whose PEM (about 1,500 bytes) is base64-encoded again in `certificateAuthority` (about 2,000 bytes).
 */
const AUTHORITY_SIZE_ESTIMATE = 2200;

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
   * @param kubernetesVersion the cluster's Kubernetes version, for example '1.33'
   * @param architecture the instance type's architecture
   */
  public static amazonLinux2023Image(kubernetesVersion: string, architecture: ec2.InstanceArchitecture): ec2.IMachineImage {
    if (!Token.isUnresolved(kubernetesVersion) && !/^1\.[0-9]+$/.test(kubernetesVersion)) {
      throw new Error(`cdk-efs-cache: EksFleetNodes.amazonLinux2023Image: kubernetesVersion must read as 1.N (for example '1.33'), got '${kubernetesVersion}'.`);
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
    checkCidr(this, props.serviceIpv4Cidr);
    checkNodeImage(this, props.hosts);

    // nodeadm's NodeConfig. Its values are double-quoted YAML scalars: a value could leave its scalar only with a `"`,
    // which no cluster name, endpoint URL, base64 authority or CIDR holds; and it is read as configuration, never run.
    const nodeConfig = [
      '---',
      'apiVersion: node.eks.aws/v1alpha1',
      'kind: NodeConfig',
      'spec:',
      '  cluster:',
      `    name: "${cluster.clusterName}"`,
      `    apiServerEndpoint: "${endpoint}"`,
      `    certificateAuthority: "${authority}"`,
      `    cidr: "${props.serviceIpv4Cidr}"`,
      '',
    ].join('\n');
    // A deploy-time certificate authority is counted as an EKS cluster's is long (base64 of a PEM certificate).
    const authorityBytes = Token.isUnresolved(authority) ? AUTHORITY_SIZE_ESTIMATE : Buffer.byteLength(authority, 'utf8');
    props.hosts._joinEksCluster(cluster.node.path, nodeConfig,
      estimatedUserDataBytes(nodeConfig.replace(authority, '')) + authorityBytes);
    // The cluster security group, as managed node groups have it: it lets the control plane and the cluster's other
    // nodes and pods reach these nodes, and them reach the control plane. The hosts' own group keeps the fleet's rules.
    props.hosts.launchTemplate.addSecurityGroup(clusterSecurityGroup);

    this.autoScalingGroup = clusterHostGroup(this, vpc, props.hosts, props,
      'The nodes\' scaling is the cluster\'s (Cluster Autoscaler or Karpenter) and shows in Kubernetes events, not a topic.');
    // aws-cdk-lib tags self-managed nodes so: the VPC CNI and the cloud provider find the cluster's instances by it.
    Tags.of(this.autoScalingGroup).add(`kubernetes.io/cluster/${cluster.clusterName}`, 'owned', { applyToLaunchedInstances: true });

    const role = props.hosts.role;
    for (const [name, reason] of NODE_POLICIES) {
      const policy = iam.ManagedPolicy.fromAwsManagedPolicyName(name);
      role.addManagedPolicy(policy);
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM4[Policy::${nagText(role, policy.managedPolicyArn)}]`, reason });
    }
    // The node role's access: an EC2_LINUX access entry (the kubelet's system:nodes group) where the cluster uses
    // access entries, the aws-auth ConfigMap of a cluster of this app that uses it alone.
    const configMapOnly = cluster instanceof eks.Cluster &&
      (cluster.authenticationMode === undefined || cluster.authenticationMode === eks.AuthenticationMode.CONFIG_MAP);
    if (configMapOnly) {
      cluster.awsAuth.addRoleMapping(role, { username: 'system:node:{{EC2PrivateDNSName}}', groups: ['system:bootstrappers', 'system:nodes'] });
    } else {
      new eks.CfnAccessEntry(this, 'AccessEntry', { clusterName: cluster.clusterName, principalArn: role.roleArn, type: 'EC2_LINUX' });
    }
  }
}

/** Throws `Invalid serviceIpv4Cidr` for what is not an IPv4 CIDR block where it is known at synth. */
function checkCidr(scope: Construct, cidr: string): void {
  if (Token.isUnresolved(cidr)) return;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32) {
    throw propError(scope, 'serviceIpv4Cidr', `must be the cluster's IPv4 service CIDR block, such as '10.100.0.0/16', got '${cidr}'.`);
  }
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
