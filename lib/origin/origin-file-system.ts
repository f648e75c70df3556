import { Duration, RemovalPolicy, Size, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct, IConstruct } from 'constructs';
import { markTlsOnly } from '../nfs/mount';
import { NFS_PORT } from '../nfs/ports';
import { describeValue, inUnitOf, propError } from '../private/errors';
import { acknowledgeCompliance } from '../private/nag';
import { defaultSubnets } from '../private/subnets';

/**
 * Options for the origin file system, shared by `OriginFileSystem` and `CachedFileSystem`.
 */
export interface OriginFileSystemOptions {
  /**
   * An existing file system to use instead of creating one. Its security group, policy and backups are left
   * as they are; mount targets must already exist in the AZs of the instances that mount it.
   *
   * @default - a new encrypted file system
   */
  readonly fileSystem?: efs.IFileSystem;

  /**
   * What happens to a file system created here when it leaves the stack. `DESTROY` deletes the data, so it also
   * needs `confirmDataLoss: true`.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Confirms, with `removalPolicy: RemovalPolicy.DESTROY`, that deleting the stack may delete the file system and its
   * data.
   *
   * @default false
   */
  readonly confirmDataLoss?: boolean;

  /**
   * The KMS key that encrypts the file system at rest.
   *
   * @default - the AWS managed key for Amazon EFS
   */
  readonly kmsKey?: kms.IKey;

  /**
   * Throughput mode of a new file system.
   *
   * @default efs.ThroughputMode.ELASTIC
   */
  readonly throughputMode?: efs.ThroughputMode;

  /**
   * Provisioned throughput, required with `ThroughputMode.PROVISIONED` and rejected with any other mode.
   *
   * @default - none
   */
  readonly provisionedThroughputPerSecond?: Size;

  /**
   * Performance mode of a new file system. Elastic throughput needs General Purpose.
   *
   * @default efs.PerformanceMode.GENERAL_PURPOSE
   */
  readonly performanceMode?: efs.PerformanceMode;

  /**
   * Whether AWS Backup takes automatic daily backups of a new file system.
   *
   * @default true
   */
  readonly enableAutomaticBackups?: boolean;

  /**
   * Name of a new file system.
   *
   * @default - no name
   */
  readonly fileSystemName?: string;
}

/** The defaults of the options of a file system this library creates, which `OriginFileSystem` applies (test/defaults.test.ts). */
export const ORIGIN_FILE_SYSTEM_DEFAULTS = {
  removalPolicy: RemovalPolicy.RETAIN,
  confirmDataLoss: false,
  throughputMode: efs.ThroughputMode.ELASTIC,
  performanceMode: efs.PerformanceMode.GENERAL_PURPOSE,
  enableAutomaticBackups: true,
} as const;

/**
 * Properties of `OriginFileSystem`.
 */
export interface OriginFileSystemProps extends OriginFileSystemOptions {
  /**
   * The VPC of the file system's mount targets.
   */
  readonly vpc: ec2.IVpc;

  /**
   * Subnets that get a mount target (one per AZ). Every AZ where cache nodes or clients run needs one.
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/**
 * The origin tier: an Amazon EFS file system, new or imported, with its mount targets and EFS metrics.
 * A new one is encrypted and refuses plain NFS, so instances mount it over TLS.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
 */
export class OriginFileSystem extends Construct implements ec2.IConnectable {
  /** The EFS file system. */
  public readonly fileSystem: efs.IFileSystem;

  /** The file system created here, if any (escape hatch). */
  public readonly createdFileSystem?: efs.FileSystem;

  /** Ingress to the mount targets; peers are allowed on TCP 2049 only. */
  public readonly connections: ec2.Connections;

  /** The file system's DNS name, `fs-id.efs.REGION.URL_SUFFIX`. */
  public readonly dnsName: string;

  /**
   * Whether the file system was given as `fileSystem` rather than created here.
   * Only a file system created here gets the TLS-only policy.
   */
  public readonly isImported: boolean;

  /** Throughput mode of a file system created here; undefined for an imported one (not known). */
  public readonly throughputMode?: efs.ThroughputMode;

  /** Performance mode of a file system created here; undefined for an imported one (not known). */
  public readonly performanceMode?: efs.PerformanceMode;

  /**
   * AZs that have a mount target, where known at synth time (new file systems); undefined for imported ones.
   */
  public readonly mountTargetAvailabilityZones?: string[];

  constructor(scope: Construct, id: string, props: OriginFileSystemProps) {
    super(scope, id);
    validateOriginFileSystemOptions(this, props, 'origin');

    if (props.fileSystem) {
      this.fileSystem = props.fileSystem;
      this.isImported = true;
    } else {
      const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
        vpc: props.vpc,
        description: 'EFS mount targets: NFS (TCP 2049) from named peers only',
        allowAllOutbound: false,
      });
      const subnets = props.vpcSubnets ?? defaultSubnets(props.vpc);
      const fs = new efs.FileSystem(this, 'Resource', {
        vpc: props.vpc,
        vpcSubnets: subnets,
        securityGroup,
        encrypted: true,
        kmsKey: props.kmsKey,
        performanceMode: props.performanceMode ?? ORIGIN_FILE_SYSTEM_DEFAULTS.performanceMode,
        throughputMode: props.throughputMode ?? ORIGIN_FILE_SYSTEM_DEFAULTS.throughputMode,
        provisionedThroughputPerSecond: props.provisionedThroughputPerSecond,
        enableAutomaticBackups: props.enableAutomaticBackups ?? ORIGIN_FILE_SYSTEM_DEFAULTS.enableAutomaticBackups,
        removalPolicy: props.removalPolicy ?? ORIGIN_FILE_SYSTEM_DEFAULTS.removalPolicy,
        fileSystemName: props.fileSystemName,
      });
      fs.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'DenyNonTlsAccess',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['*'],
          conditions: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      markTlsOnly(fs);
      this.createdFileSystem = fs;
      this.throughputMode = props.throughputMode ?? ORIGIN_FILE_SYSTEM_DEFAULTS.throughputMode;
      this.performanceMode = props.performanceMode ?? ORIGIN_FILE_SYSTEM_DEFAULTS.performanceMode;
      this.fileSystem = fs;
      this.isImported = false;
      this.mountTargetAvailabilityZones = props.vpc
        .selectSubnets(subnets)
        .subnets.map((s) => s.availabilityZone);
      if (props.enableAutomaticBackups !== false) {
        acknowledgeCompliance(fs, 'EFSInBackupPlan', 'Automatic backups are on: AWS Backup keeps the file system in ' +
          'its default backup plan (aws/efs/automatic-backup-plan), which the rule cannot see because it is not a stack resource.');
      }
    }
    this.connections = new ec2.Connections({
      securityGroups: this.fileSystem.connections.securityGroups,
      defaultPort: ec2.Port.tcp(NFS_PORT),
    });
    this.dnsName = `${this.fileSystem.fileSystemId}.efs.${this.fileSystem.stack.region}.${this.fileSystem.stack.urlSuffix}`;
  }

  /** The file system id. */
  public get fileSystemId(): string {
    return this.fileSystem.fileSystemId;
  }

  /** Any EFS metric of this file system (namespace AWS/EFS, dimension FileSystemId). */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/EFS',
      metricName,
      dimensionsMap: { FileSystemId: this.fileSystem.fileSystemId },
      period: Duration.minutes(1),
      statistic: 'Sum',
      ...props,
    });
  }

  /** Bytes of all I/O (reads, writes, metadata), summed per period. */
  public metricTotalIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('TotalIOBytes', props);
  }

  /** Bytes read from the file system, summed per period: what the cache tiers exist to reduce. */
  public metricDataReadIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('DataReadIOBytes', props);
  }

  /** Bytes written to the file system, summed per period. */
  public metricDataWriteIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('DataWriteIOBytes', props);
  }

  /** Metadata bytes, summed per period. */
  public metricMetadataIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('MetadataIOBytes', props);
  }

  /** Metered I/O bytes (reads count at one third), summed per period: what throughput is billed against. */
  public metricMeteredIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('MeteredIOBytes', props);
  }

  /** Percent of the General Purpose I/O limit in use (maximum per period). */
  public metricPercentIoLimit(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('PercentIOLimit', { statistic: 'Maximum', ...props });
  }

  /** Burst credits left, in bytes (Bursting throughput only; minimum per period). */
  public metricBurstCreditBalance(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('BurstCreditBalance', { statistic: 'Minimum', ...props });
  }

  /** Throughput the file system may drive, bytes per second (average per period). */
  public metricPermittedThroughput(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('PermittedThroughput', { statistic: 'Average', ...props });
  }

  /** Connected NFS clients (sum per period). */
  public metricClientConnections(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ClientConnections', props);
  }

  /** Bytes stored (dimension StorageClass=Total; reported every 15 minutes). */
  public metricStorageBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/EFS',
      metricName: 'StorageBytes',
      dimensionsMap: { FileSystemId: this.fileSystem.fileSystemId, StorageClass: 'Total' },
      period: Duration.minutes(15),
      statistic: 'Average',
      ...props,
    });
  }
}

/**
 * Throws when an instance placed in `subnets` would find no mount target of `origin` in its AZ. Only AZs known at synth
 * time are compared: an unresolved AZ, or an imported file system, is not judged. Internal (a `CachedFileSystem` checks
 * its fleet's subnets with it).
 */
export function checkMountTargetsCover(origin: OriginFileSystem, subnets: ec2.ISubnet[], propName: string): void {
  const covered = origin.mountTargetAvailabilityZones;
  if (!covered) return;
  for (const subnet of subnets) {
    const az = subnet.availabilityZone;
    if (!covered.some((c) => azMayBeSame(origin, c, az))) {
      throw propError(origin,
        propName,
        `subnet ${Token.isUnresolved(subnet.subnetId) ? subnet.node.path : subnet.subnetId} is in ${describeValue(az, origin, false)}, ` +
          `where the file system has no mount target (mount targets: ${covered.map((c) => describeValue(c, origin, false)).join(', ')}). ` +
          'Add a subnet in that AZ to the origin\'s vpcSubnets, or place the instances in covered AZs.',
      );
    }
  }
}

/**
 * False only when two AZ names are known to differ: two literals, or two `Fn::Select` picks of different indexes
 * from the same `Fn::GetAZs` list (how env-agnostic VPCs name their AZs).
 */
function azMayBeSame(scope: Construct, a: string, b: string): boolean {
  if (!Token.isUnresolved(a) && !Token.isUnresolved(b)) return a === b;
  const stack = Stack.of(scope);
  const ra = JSON.stringify(stack.resolve(a));
  const rb = JSON.stringify(stack.resolve(b));
  if (ra === rb) return true;
  const pick = (r: string) => {
    const m = /^\{"Fn::Select":\[(\d+),(\{"Fn::GetAZs":.*\})\]\}$/.exec(r);
    return m ? { index: m[1], list: m[2] } : undefined;
  };
  const pa = pick(ra);
  const pb = pick(rb);
  if (pa && pb && pa.list === pb.list) return pa.index === pb.index;
  return true;
}

/** Checks origin options for contradictions; `prefix` names where the options sit (for error messages). */
export function validateOriginFileSystemOptions(scope: IConstruct, o: OriginFileSystemOptions, prefix: string): void {
  const p = (name: string) => (prefix === 'origin' ? name : `${prefix}.${name}`);
  if (o.fileSystem) {
    const createOnly: Array<keyof OriginFileSystemOptions> = [
      'removalPolicy', 'confirmDataLoss', 'kmsKey', 'throughputMode', 'provisionedThroughputPerSecond',
      'performanceMode', 'enableAutomaticBackups', 'fileSystemName',
    ];
    for (const k of createOnly) {
      if (o[k] !== undefined) {
        throw propError(scope, p(k), `applies only to a file system created here, but ${p('fileSystem')} imports an existing one. Remove one of them.`);
      }
    }
    return;
  }
  if (o.removalPolicy === RemovalPolicy.DESTROY && o.confirmDataLoss !== true) {
    throw propError(scope,
      p('removalPolicy'),
      `RemovalPolicy.DESTROY deletes the file system and its data with the stack; set ${p('confirmDataLoss')}: true as well if that is intended.`,
    );
  }
  if (o.removalPolicy === RemovalPolicy.SNAPSHOT) {
    throw propError(scope, p('removalPolicy'), 'EFS does not support RemovalPolicy.SNAPSHOT; use RETAIN (default) or DESTROY.');
  }
  if (o.confirmDataLoss === true && o.removalPolicy !== RemovalPolicy.DESTROY) {
    throw propError(scope, p('confirmDataLoss'), `only has a meaning with ${p('removalPolicy')}: RemovalPolicy.DESTROY.`);
  }
  const mode = o.throughputMode ?? ORIGIN_FILE_SYSTEM_DEFAULTS.throughputMode;
  if (mode === efs.ThroughputMode.ELASTIC && o.performanceMode === efs.PerformanceMode.MAX_IO) {
    throw propError(scope, p('performanceMode'), 'Max I/O cannot be combined with Elastic throughput (the default throughputMode); use General Purpose, or set throughputMode.');
  }
  if (mode === efs.ThroughputMode.PROVISIONED && o.provisionedThroughputPerSecond === undefined) {
    throw propError(scope, p('provisionedThroughputPerSecond'), 'is required with ThroughputMode.PROVISIONED.');
  }
  if (mode !== efs.ThroughputMode.PROVISIONED && o.provisionedThroughputPerSecond !== undefined) {
    throw propError(scope, p('provisionedThroughputPerSecond'), `is only valid with ThroughputMode.PROVISIONED (${p('throughputMode')}).`);
  }
  // aws-efs converts it to MiB/s: a token given in another unit fails there with a message that names no prop.
  const throughput = o.provisionedThroughputPerSecond;
  if (throughput !== undefined) inUnitOf(scope, p('provisionedThroughputPerSecond'), () => throughput.toMebibytes());
}
