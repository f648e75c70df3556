import { Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CachedFileSystem } from '../lib';

/**
 * A VPC over two AZs (private subnets with one NAT gateway, flow logs), a CachedFileSystem with two cache nodes,
 * and an Auto Scaling group of FS-Cache clients that read through them.
 */
export class SampleStack extends Stack {
  public readonly vpc: ec2.Vpc;
  public readonly cachedFileSystem: CachedFileSystem;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', { retention: logs.RetentionDays.ONE_MONTH });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup) } },
    });
    this.cachedFileSystem = new CachedFileSystem(this, 'SharedData', {
      vpc: this.vpc,
      cacheFleet: { nodeCount: 2 },
    });
    // FS-Cache clients reading through the cache fleet, in an Auto Scaling group (scale it up to use it).
    const clients = this.cachedFileSystem.addClientLaunchTemplate('Clients');
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
