import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { OriginFileSystem, OriginOptions } from './origin/origin-file-system';

/**
 * Properties of `CachedFileSystem`.
 */
export interface CachedFileSystemProps {
  /** The VPC of every tier. */
  readonly vpc: ec2.IVpc;

  /**
   * Subnets of the file system's mount targets, and the default subnets of the other tiers.
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * The origin file system: options of a new one, or `{ fileSystem }` to use an existing one.
   *
   * @default - a new encrypted EFS file system with the defaults of `OriginOptions`
   */
  readonly origin?: OriginOptions;
}

/**
 * Amazon EFS with caches in front of it, in one construct.
 *
 * ## Resources Deployed
 * - The origin: an encrypted EFS file system with a TLS-only policy (see `OriginFileSystem`), or an imported one.
 *
 * ## Security Considerations
 * Every tier has its own security group; NFS (TCP 2049) is opened only between the tiers that talk to each other,
 * never to 0.0.0.0/0.
 */
export class CachedFileSystem extends Construct {
  /** The origin tier. */
  public readonly origin: OriginFileSystem;

  /** The VPC of every tier. */
  public readonly vpc: ec2.IVpc;

  constructor(scope: Construct, id: string, props: CachedFileSystemProps) {
    super(scope, id);
    this.vpc = props.vpc;
    this.origin = new OriginFileSystem(this, 'Origin', {
      ...props.origin,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
    });
  }
}
