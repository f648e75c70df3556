import { Aws, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { CachedFileSystem, Capacity } from '../lib';

/**
 * How large the sample's instances are. Only the instance types differ between the sizes (and what the library
 * derives from them: the nodes' nfsd threads, two per vCPU and at least 8, so 8 on c7gn.large and 128 on
 * c7gn.16xlarge): the resources and their logical ids are the same, so a deployed sample changes size in place. What
 * each costs by the hour is in docs/sizing-and-cost.md#prices.
 *
 * - `trial` (the default): two c7gn.large cache nodes (2 vCPUs, 4 GiB each) and m6id.large FS-Cache clients, small
 *   sizes of the production types' families (the same architecture, encryption in transit and, on the clients, NVMe
 *   instance store for the disk cache): about a twentieth of the production size's hourly cost, for trying the
 *   library out.
 * - `production`: the library's default types, two c7gn.16xlarge cache nodes (64 vCPUs, 128 GiB each) and m6id.xlarge
 *   clients, sized for the throughput the library is built for: several dollars an hour, nearly all of it the nodes.
 */
export type SampleSize = 'trial' | 'production';

/** The sizes of the sample, the default first: the values `-c size=...` accepts. */
export const SAMPLE_SIZES: readonly SampleSize[] = ['trial', 'production'];

/**
 * The size named by `value` (the sample app's context value `size`, or `SampleStackProps.size`): `trial` when it is
 * undefined. Throws for anything else, naming the accepted values.
 */
export function sampleSize(value: unknown): SampleSize {
  if (value === undefined) return 'trial';
  if (typeof value === 'string' && (SAMPLE_SIZES as readonly string[]).includes(value)) return value as SampleSize;
  throw new Error(`Invalid size: ${JSON.stringify(value)} is not a size of the sample stack (the context value ` +
    '-c size=..., or SampleStackProps.size): give \'trial\' (the default) or \'production\'.');
}

/** The instance types of each size; undefined: the library's default (c7gn.16xlarge nodes, m6id.xlarge clients). */
const SIZE_TYPES: Record<SampleSize, { readonly nodes?: ec2.InstanceType; readonly clients?: ec2.InstanceType }> = {
  // Small sizes of the default types' families: Graviton nodes with no instance store (so no node disk cache,
  // as with c7gn.16xlarge), x86 clients with NVMe instance store (118 GB) for the disk cache.
  trial: { nodes: new ec2.InstanceType('c7gn.large'), clients: new ec2.InstanceType('m6id.large') },
  production: {},
};

/** The sample stack's props: a stack's, and its size. */
export interface SampleStackProps extends StackProps {
  /**
   * The instances' size (`SampleSize` says what each holds and costs).
   * @default 'trial'
   */
  readonly size?: SampleSize;
}

/** What `sampleNetwork` creates. */
export interface SampleNetwork {
  readonly vpc: ec2.Vpc;
  /** Encrypts the flow logs and the alarm topic. */
  readonly key: kms.Key;
  /** Where the alarms go: subscribe to it. */
  readonly alarmTopic: sns.Topic;
}

/**
 * The network around the sample, in `scope`: a VPC over two AZs (private subnets with one NAT gateway; public
 * subnets that hold only the NAT gateway and assign no public address), flow logs to an encrypted log group, and an
 * encrypted SNS topic for the alarms. Held to cdk-nag's AwsSolutions, NIST 800-53 R5 and HIPAA Security packs, like the library.
 */
export function sampleNetwork(scope: Construct): SampleNetwork {
  const key = new kms.Key(scope, 'Key', {
    description: 'Encrypts the VPC flow logs and the alarm topic of the cdk-efs-cache sample',
    enableKeyRotation: true,
  });
  // CloudWatch Logs encrypts with the key only for log groups of this account and region.
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: {
      ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:*` },
    },
  }));
  // CloudWatch alarms publish to the encrypted topic.
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
    resources: ['*'],
  }));
  const alarmTopic = new sns.Topic(scope, 'Alarms', { masterKey: key, enforceSSL: true });

  const flowLogGroup = new logs.LogGroup(scope, 'FlowLogs', {
    retention: logs.RetentionDays.ONE_MONTH,
    encryptionKey: key,
  });
  // The flow logs' role, with its one statement in a customer managed policy rather than an inline one.
  const flowLogPolicy = new iam.ManagedPolicy(scope, 'FlowLogsPolicy', {
    description: 'VPC flow logs of the cdk-efs-cache sample: write to their log group',
    statements: [new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
      resources: [flowLogGroup.logGroupArn],
    })],
  });
  const flowLogRole = new iam.Role(scope, 'FlowLogsRole', {
    assumedBy: new iam.ServicePrincipal('vpc-flow-logs.amazonaws.com'),
    managedPolicies: [flowLogPolicy],
  });
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
      { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
    ],
    flowLogs: {
      all: {
        // Its statement is in flowLogPolicy above; the flow log adds nothing to the role.
        destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup, flowLogRole.withoutPolicyUpdates()),
      },
    },
  });
  for (const subnet of vpc.publicSubnets) {
    const reason = 'The route of the public subnets, which hold only the NAT gateway: it is how the private subnets ' +
      'reach package repositories and AWS APIs. No instance runs in these subnets, and they assign no public address.';
    // The same rule in cdk-nag's NIST 800-53 R5 and HIPAA Security packs.
    Validations.of(subnet.node.findChild('DefaultRoute')).acknowledge(
      { id: 'NIST.800.53.R5-VPCNoUnrestrictedRouteToIGW', reason },
      { id: 'HIPAA.Security-VPCNoUnrestrictedRouteToIGW', reason },
    );
  }
  return { vpc, key, alarmTopic };
}

/**
 * A VPC over two AZs (see `sampleNetwork`), a CachedFileSystem with two cache nodes whose alarms notify an
 * encrypted topic, and an Auto Scaling group of FS-Cache clients that read through them; its instances of the trial
 * size unless `props.size` says `production` (see `SampleSize`).
 */
export class SampleStack extends Stack {
  public readonly vpc: ec2.Vpc;
  public readonly alarmTopic: sns.Topic;
  public readonly cachedFileSystem: CachedFileSystem;

  /** The size the stack was built with. */
  public readonly size: SampleSize;

  constructor(scope: Construct, id: string, props: SampleStackProps = {}) {
    const { size, ...stackProps } = props;
    super(scope, id, stackProps);
    this.size = sampleSize(size);
    const types = SIZE_TYPES[this.size];
    const network = sampleNetwork(this);
    this.vpc = network.vpc;
    this.alarmTopic = network.alarmTopic;
    this.cachedFileSystem = new CachedFileSystem(this, 'SharedData', {
      vpc: this.vpc,
      // Two nodes at either size: the clients' names round-robin over them.
      cacheFleet: { capacity: Capacity.nodes(2), instanceType: types.nodes },
      monitoring: { alarmTopic: this.alarmTopic },
    });
    // FS-Cache clients reading through the cache fleet, in an Auto Scaling group (scale it up to use it).
    const clients = this.cachedFileSystem.addClientLaunchTemplate('Clients', { instanceType: types.clients });
    const group = new autoscaling.AutoScalingGroup(this, 'ClientGroup', {
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      launchTemplate: clients.launchTemplate,
      minCapacity: 1,
      maxCapacity: 4,
    });
    Validations.of(group).acknowledge({
      id: 'AwsSolutions-AS3',
      reason: 'A sample group of cache clients; scaling notifications are left to the application that adopts it.',
    });
  }
}
