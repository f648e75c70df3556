import { Duration } from 'aws-cdk-lib';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';

/** Options of `FanOut.route53()`. */
export interface Route53FanOutOptions {
  /**
   * An existing private hosted zone for the records.
   *
   * @default - a new private hosted zone named `zoneName`, associated with the VPC
   */
  readonly hostedZone?: route53.IPrivateHostedZone;

  /**
   * Name of the new private hosted zone; not with `hostedZone`. Synth refuses a name another zone of the app has on
   * the VPC, one over DNS's 253 characters, and one that would shadow AWS's endpoints or the VPC's host names.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   * @default 'efs-cache.internal'
   */
  readonly zoneName?: string;

  /**
   * The record name clients mount, relative to the zone.
   *
   * @default 'cache'
   */
  readonly recordName?: string;

  /**
   * TTL of the records.
   *
   * @default Duration.minutes(1)
   */
  readonly recordTtl?: Duration;
}

/** The defaults of `Route53FanOutOptions` (test/defaults.test.ts). */
export const ROUTE53_FAN_OUT_DEFAULTS = {
  zoneName: 'efs-cache.internal',
  recordName: 'cache',
  recordTtl: Duration.minutes(1),
} as const;

/** Where a Network Load Balancer writes its access logs (`NetworkLoadBalancerFanOutOptions.accessLogs`). */
export interface AccessLogsOptions {
  /**
   * The bucket, in the stack's region, encrypted with SSE-S3 or a customer managed KMS key (not `aws/s3`). Its policy,
   * and its key's when the key is of the app, let the log delivery service write under `prefix`.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   */
  readonly bucket: s3.IBucket;

  /**
   * The key prefix of the access logs, known at synth. The bucket policy lets the log delivery write only under it.
   *
   * @default - the bucket's root
   */
  readonly prefix?: string;
}

/** Options of `FanOut.networkLoadBalancer()`. */
export interface NetworkLoadBalancerFanOutOptions {
  /**
   * How long an idle NFS connection is kept (60 seconds to 6000 seconds).
   *
   * @default Duration.seconds(350)
   */
  readonly idleTimeout?: Duration;

  /**
   * Whether the load balancer sends a client to nodes in other AZs. Off keeps traffic in the AZ (no cross-AZ charges),
   * and needs a node in each AZ that has clients.
   *
   * @default false
   */
  readonly crossZone?: boolean;

  /**
   * Where the load balancer writes its access logs, for policies that require the attribute (checkov CKV_AWS_91).
   * Its listeners are TCP, which a Network Load Balancer does not log, so the bucket receives no entries.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   * @default - no access logs (AwsSolutions ELB2 and the NIST and HIPAA ELBLoggingEnabled acknowledged with that reason)
   */
  readonly accessLogs?: AccessLogsOptions;
}

/** The defaults of `NetworkLoadBalancerFanOutOptions` (test/defaults.test.ts). */
export const NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS = {
  idleTimeout: Duration.seconds(350),
  crossZone: false,
} as const;
