import { Stack, StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CachedFileSystem } from '../lib';

/**
 * A VPC over two AZs (private subnets with one NAT gateway, flow logs) and a CachedFileSystem in it.
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
  }
}
