import * as crypto from 'crypto';
import * as fs from 'fs';
import { Annotations, Aws, Duration, Lazy, Size, Stack, Token, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3_assets from 'aws-cdk-lib/aws-s3-assets';
import { Construct, IConstruct } from 'constructs';
import { CommonInstanceOptions } from '../instance/options';
import { ResolvedInstance, resolveInstance } from '../instance/resolve';
import { grantSignal, instanceRole } from '../instance/role';
import { RenderedScript, renderScript } from '../instance/user-data';
import { MOUNT_HELPER_TYPE } from '../nfs/enum-values';
import { checkEfsMount, efsDnsName, helperOptions, MountHelper, RECOMMENDED_NFS_OPTIONS, seconds } from '../nfs/mount';
import { NFS_PORT } from '../nfs/ports';
import { allowFromConsumerSide } from '../private/connections';
import { describeValue, knownAtSynth, propError } from '../private/errors';
import { DOT_SEGMENT_RE, normalS3Prefix, PATH_RE, S3_PREFIX_RE } from '../private/paths';
import { REMOVED_SEEDER_PROPS, refuseRemovedProps } from '../private/removed-props';
import { grantReadPrefix } from '../private/s3-grant';
import { defaultSubnets, ENDPOINT_NEEDS, s3Need, warnIfIsolated } from '../private/subnets';
import { SEED_SOURCE_KIND, SeedKind } from './seed-kind';

/** What a bound `SeedSource` tells the seeding instance. */
export interface SeedSourceBinding {
  /** The kind of source. */
  readonly kind: SeedKind;
  /** `s3://bucket/prefix/`, `s3://bucket/key.zip`, or an absolute path on the instance. */
  readonly uri: string;
  /** Region of the source bucket; undefined for the AWS CLI's default (the instance's region). */
  readonly region?: string;
}

/** What each factory of `SeedSource` was given. */
type SeedSpec =
  | { readonly kind: SeedKind.S3; readonly bucket: s3.IBucket; readonly prefix: string }
  | { readonly kind: SeedKind.ASSET; readonly path: string; readonly options: s3_assets.AssetOptions }
  | { readonly kind: SeedKind.INSTANCE_DIRECTORY; readonly path: string };

/**
 * The data set a `DataSeeder` loads: an S3 prefix, a local directory uploaded as an asset, or an instance directory.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
 */
export class SeedSource {
  /**
   * Every object under `prefix` in `bucket`, which the seeder may list and read, and nothing else of the bucket.
   * CloudFormation cannot see a change of the objects: change `version` to seed again.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
   * @param prefix key prefix, for example `datasets/images/` (a trailing `/` is added), of letters, digits and
   *   `_=+-/.` without empty, `.` or `..` components, known at synth (it bounds what the role may read); '' for the whole bucket
   */
  public static s3(bucket: s3.IBucket, prefix = ''): SeedSource {
    return new SeedSource({ kind: SeedKind.S3, bucket, prefix });
  }

  /**
   * A local directory (or a .zip of one), zipped and uploaded with the stack as a CDK asset.
   * A change of its content changes the asset hash, which seeds again.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
   */
  public static asset(path: string, options: s3_assets.AssetOptions = {}): SeedSource {
    return new SeedSource({ kind: SeedKind.ASSET, path, options });
  }

  /**
   * A directory that already exists on the seeding instance, for example baked into a custom `machineImage`.
   * Change `version` to seed again after it changed.
   */
  public static instanceDirectory(path: string): SeedSource {
    return new SeedSource({ kind: SeedKind.INSTANCE_DIRECTORY, path });
  }

  private constructor(private readonly spec: SeedSpec) {}

  /**
   * Creates what the source needs (an asset, permissions for `role`) and says where the data is. Checked here rather
   * than in the factories, which have no construct yet: the errors name the seeder's path.
   *
   * @internal
   */
  public _bind(scope: Construct, role: iam.IRole): SeedSourceBinding {
    // From JavaScript, a subclass of SeedSource made without a factory reaches here without a spec.
    if (!this.spec) throw propError(scope, 'source', `must be made by ${FACTORIES}.`);
    switch (this.spec.kind) {
      case SeedKind.S3: return bindBucket(scope, role, this.spec.bucket, this.spec.prefix);
      case SeedKind.ASSET: return bindAsset(scope, role, this.spec.path, this.spec.options);
      case SeedKind.INSTANCE_DIRECTORY: return bindInstanceDirectory(scope, this.spec.path);
    }
  }
}

const FACTORIES = 'SeedSource.s3(bucket, prefix), SeedSource.asset(path) or SeedSource.instanceDirectory(path)';

function bindBucket(scope: Construct, role: iam.IRole, bucket: s3.IBucket, givenPrefix: string): SeedSourceBinding {
  // As for S3 mirrors: the prefix bounds what the role may read, in IAM resource patterns where * and ? are wildcards
  // that no deploy-time value may bring in.
  knownAtSynth(scope, 'source', givenPrefix, 'the S3 prefix: the seeder\'s role may read only under it');
  const prefix = normalS3Prefix(givenPrefix);
  // As for S3 mirrors: no . or .. component, which IAM's resource patterns and S3 keys take literally while a reader
  // of the rule would take them as a path.
  if (!Token.isUnresolved(givenPrefix) && (!S3_PREFIX_RE.test(prefix) || DOT_SEGMENT_RE.test(prefix))) {
    throw propError(scope, 'source', `the S3 prefix ${describeValue(givenPrefix)} may hold only letters, digits and . _ = + - / ` +
      '(no empty, . or .. component).');
  }
  grantReadPrefix(role, bucket, prefix, 'The seeder reads every object under the source prefix; their keys are not known at synth time.');
  return { kind: SeedKind.S3, uri: `s3://${bucket.bucketName}/${prefix}`, region: bucket.env.region };
}

function bindAsset(scope: Construct, role: iam.IRole, path: string, options: s3_assets.AssetOptions): SeedSourceBinding {
  if (!fs.existsSync(path)) throw propError(scope, 'source', `the asset path ${path} does not exist.`);
  const asset = new s3_assets.Asset(scope, 'Asset', { ...options, path });
  if (!asset.isZipArchive) {
    throw propError(scope, 'source', `${path} is a single file; SeedSource.asset takes a directory (or a .zip of one).`);
  }
  // Exactly the asset's object: the seeder downloads one zip.
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['s3:GetObject'],
    resources: [`arn:${Aws.PARTITION}:s3:::${asset.s3BucketName}/${asset.s3ObjectKey}`],
  }));
  return { kind: SeedKind.ASSET, uri: `s3://${asset.s3BucketName}/${asset.s3ObjectKey}`, region: Stack.of(scope).region };
}

function bindInstanceDirectory(scope: Construct, path: string): SeedSourceBinding {
  knownAtSynth(scope, 'source', path, 'the instance directory is checked as a path');
  if (!PATH_RE.test(path) || path === '/' || path.endsWith('/') || DOT_SEGMENT_RE.test(path)) {
    throw propError(scope, 'source', 'the instance directory must be an absolute path other than / (letters, digits, . _ - /), ' +
      `got ${describeValue(path)}.`);
  }
  return { kind: SeedKind.INSTANCE_DIRECTORY, uri: path };
}

/** Properties of `DataSeeder`. */
export interface DataSeederProps extends CommonInstanceOptions {
  /** The VPC of the seeding instance. */
  readonly vpc: ec2.IVpc;

  /** The file system that receives the data, created anywhere or imported. */
  readonly fileSystem: efs.IFileSystem;

  /** The data set. */
  readonly source: SeedSource;

  /**
   * Directory in the file system that receives the data (created if missing).
   *
   * @default '/'
   */
  readonly targetPath?: string;

  /**
   * Parallel rsync jobs (fpsync -n). Small files are latency-bound, so many jobs in flight are what makes NFS fast.
   *
   * @default 50
   */
  readonly workers?: number;

  /**
   * Files per rsync job (fpsync -f). Small parts keep all workers busy on small data sets; for millions of files,
   * larger parts (1,000 or more) spare the per-job start-up cost.
   *
   * @default 100
   */
  readonly filesPerPart?: number;

  /**
   * Whether to delete files under `targetPath` that the source does not hold (one rsync --delete pass after the
   * copy). Off, a seeding run only adds and updates.
   *
   * @default false
   */
  readonly deleteExtraneous?: boolean;

  /**
   * Any label of up to 64 characters (`A-Z a-z 0-9 . _ : + -`) whose change seeds again.
   * Use it after an S3 prefix or an instance directory changed, which CloudFormation cannot see.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
   * @default - none
   */
  readonly version?: string;

  /**
   * How the instance mounts the file system.
   *
   * @default MountHelper.EFS_UTILS - TLS and IAM, which a file system created by this library requires
   */
  readonly mountHelper?: MountHelper;

  /**
   * How long mounting may keep failing before the run gives up (new mount targets take a while to resolve).
   *
   * @default Duration.minutes(5)
   */
  readonly mountTimeout?: Duration;

  /**
   * How long CloudFormation waits for the instance's signal that the data is there, from 5 minutes to 12 hours.
   * After it, `cdk deploy` fails and rolls back.
   *
   * @default Duration.hours(2)
   */
  readonly signalTimeout?: Duration;

  /**
   * Time between progress lines in the instance's log (files and bytes copied so far).
   *
   * @default Duration.seconds(30)
   */
  readonly progressInterval?: Duration;

  /**
   * Subnet of the seeding instance (the first one selected). Its AZ needs a mount target of the file system, and
   * the instance needs HTTPS to S3, CloudFormation and the package repositories (in isolated subnets: VPC
   * endpoints, which a synth warning names).
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/** The defaults of `DataSeederProps`, which a `DataSeeder` applies (test/defaults.test.ts). */
export const DATA_SEEDER_DEFAULTS = {
  targetPath: '/',
  workers: 50,
  filesPerPart: 100,
  deleteExtraneous: false,
  mountHelper: MountHelper.EFS_UTILS,
  mountTimeout: Duration.minutes(5),
  signalTimeout: Duration.hours(2),
  progressInterval: Duration.seconds(30),
  instanceType: 'm7g.xlarge',
  rootVolumeSize: Size.gibibytes(64),
} as const;

/**
 * Loads a data set into EFS in parallel when a deployment changes it, and makes `cdk deploy` wait for it.
 * A one-shot instance copies it with fpsync and terminates itself; nothing can log in to it.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
 */
export class DataSeeder extends Construct implements ec2.IConnectable, iam.IGrantable {
  /** The seeding instance. */
  public readonly instance: ec2.Instance;
  /** The instance's role. */
  public readonly role: iam.Role;
  /** The instance's role, to grant it more. */
  public readonly grantPrincipal: iam.IPrincipal;
  /** The instance's security group. */
  public readonly securityGroup: ec2.SecurityGroup;
  /** The instance's network access (outbound only). */
  public readonly connections: ec2.Connections;
  /** Where the data comes from. */
  public readonly source: SeedSource;
  /** Parallel rsync jobs. */
  public readonly workers: number;
  /** Files per rsync job. */
  public readonly filesPerPart: number;
  /** Estimated size of the user data in bytes (tokens counted generously). */
  public readonly userDataBytes: number;

  constructor(scope: Construct, id: string, props: DataSeederProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_SEEDER_PROPS);
    validateDataSeederProps(this, props);
    this.source = checkSource(this, props.source);
    warnIfDeletingWholeFileSystem(this, props);
    const instance = resolveInstance(this, props, DATA_SEEDER_DEFAULTS);
    const mountHelper = props.mountHelper ?? DATA_SEEDER_DEFAULTS.mountHelper;
    checkEfsMount(this, props.fileSystem, { helperProp: 'mountHelper', helper: mountHelper }, !!props.machineImage);
    this.workers = props.workers ?? DATA_SEEDER_DEFAULTS.workers;
    this.filesPerPart = props.filesPerPart ?? DATA_SEEDER_DEFAULTS.filesPerPart;

    this.securityGroup = this.seederSecurityGroup(props);
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
    this.role = this.seederRole(props);
    this.grantPrincipal = this.role;
    const source = this.source._bind(this, this.role);

    let userData = '';
    this.instance = this.seedingInstance(props, instance, source, () => userData);
    const rendered = this.renderSeedScript(props, source, mountHelper);
    userData = rendered.text;
    this.userDataBytes = rendered.estimatedBytes;
  }

  /** The seeder's security group: HTTPS out, and NFS out to the file system. */
  private seederSecurityGroup(props: DataSeederProps): ec2.SecurityGroup {
    const group = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'EFS data seeder: no inbound; HTTPS out (S3, CloudFormation, packages) and NFS to the file system',
      allowAllOutbound: false,
    });
    group.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS: S3, CloudFormation signal, packages');
    // Both rules in the seeder's stack when the file system is of another (see CacheFleet).
    allowFromConsumerSide(group, props.fileSystem, ec2.Port.tcp(NFS_PORT), 'NFS from the EFS data seeder');
    return group;
  }

  /** The seeder's role: it writes the file system as root and signals its own stack. */
  private seederRole(props: DataSeederProps): iam.Role {
    const role = instanceRole(this, 'EFS data seeder: read the source, write the file system as root, signal its own stack', false);
    // Root access: rsync keeps owners and modes, and the file system's root directory belongs to root.
    props.fileSystem.grant(role, 'elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite', 'elasticfilesystem:ClientRootAccess');
    grantSignal(role, Stack.of(this));
    return role;
  }

  /**
   * The one-shot instance that seeds and terminates itself: IMDSv2, the encrypted root volume, a creation policy that
   * waits for its signal, and a logical id that changes with what it is made of. `userData` gives its user data.
   */
  private seedingInstance(props: DataSeederProps, instance: ResolvedInstance, source: SeedSourceBinding, userData: () => string): ec2.Instance {
    const vpcSubnets = props.vpcSubnets ?? defaultSubnets(props.vpc);
    warnIfIsolated(this, 'vpcSubnets', props.vpc, props.vpc.selectSubnets(vpcSubnets).subnets.slice(0, 1), [ENDPOINT_NEEDS.packages,
      s3Need(...(source.kind === SeedKind.INSTANCE_DIRECTORY ? [] : ['the seed source'])), ENDPOINT_NEEDS.cloudFormation]);
    const seeding = new ec2.Instance(this, 'Instance', {
      vpc: props.vpc,
      vpcSubnets,
      instanceType: instance.instanceType,
      machineImage: instance.machineImage,
      role: this.role,
      securityGroup: this.securityGroup,
      userData: ec2.UserData.custom(Lazy.string({ produce: userData })),
      userDataCausesReplacement: false,
      httpTokens: ec2.HttpTokens.REQUIRED,
      httpPutResponseHopLimit: 1,
      httpEndpoint: true,
      detailedMonitoring: true,
      instanceInitiatedShutdownBehavior: ec2.InstanceInitiatedShutdownBehavior.TERMINATE,
      propagateTagsToVolumeOnCreation: true,
      blockDevices: [instance.rootVolume],
    });
    instance.checkOs(seeding.osType);
    seeding.node.addDependency(props.fileSystem.mountTargetsAvailable);
    acknowledgeOneShotInstance(seeding);
    const cfnInstance = seeding.node.defaultChild as ec2.CfnInstance;
    cfnInstance.cfnOptions.creationPolicy = {
      resourceSignal: { count: 1, timeout: (props.signalTimeout ?? DATA_SEEDER_DEFAULTS.signalTimeout).toIsoString() },
    };
    replaceOnChange(cfnInstance);
    return seeding;
  }

  /** The seeding script (assets/seeding/seed.sh) with its parameters, readable by the seeder's role. */
  private renderSeedScript(props: DataSeederProps, source: SeedSourceBinding, mountHelper: MountHelper): RenderedScript {
    const stack = Stack.of(this);
    const rendered = renderScript({
      script: 'seeding/seed.sh',
      description: `the data seeder ${this.node.path}`,
      scope: this,
      parameters: {
        EFSC_SOURCE_KIND: SEED_SOURCE_KIND[source.kind],
        EFSC_SOURCE_URI: source.uri,
        EFSC_SOURCE_REGION: source.region ?? '',
        EFSC_EFS_SERVER: efsDnsName(props.fileSystem),
        EFSC_MOUNT_TYPE: MOUNT_HELPER_TYPE[mountHelper],
        EFSC_MOUNT_OPTIONS: [...helperOptions(mountHelper), ...RECOMMENDED_NFS_OPTIONS].join(','),
        EFSC_MOUNT_TIMEOUT_SEC: seconds(props.mountTimeout ?? DATA_SEEDER_DEFAULTS.mountTimeout),
        EFSC_TARGET_PATH: props.targetPath ?? DATA_SEEDER_DEFAULTS.targetPath,
        EFSC_WORKERS: String(this.workers),
        EFSC_FILES_PER_PART: String(this.filesPerPart),
        EFSC_DELETE_EXTRANEOUS: String(props.deleteExtraneous ?? DATA_SEEDER_DEFAULTS.deleteExtraneous),
        EFSC_PROGRESS_SEC: seconds(props.progressInterval ?? DATA_SEEDER_DEFAULTS.progressInterval),
        EFSC_VERSION: props.version ?? '',
        EFSC_SIGNAL_STACK: stack.stackName,
        EFSC_SIGNAL_RESOURCE: (this.instance.node.defaultChild as ec2.CfnInstance).logicalId,
        EFSC_SIGNAL_REGION: stack.region,
      },
    });
    rendered.grantRead(this.role);
    return rendered;
  }
}

/** Warns when `deleteExtraneous` would delete whatever of the whole file system the source does not hold. */
function warnIfDeletingWholeFileSystem(scope: Construct, props: DataSeederProps): void {
  if (props.deleteExtraneous && (props.targetPath ?? DATA_SEEDER_DEFAULTS.targetPath) === '/') {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:deleteWholeFileSystem',
      'deleteExtraneous: with targetPath \'/\', every file of the file system that the source does not hold is ' +
      'deleted. Give a targetPath for the data set if the file system holds anything else.');
  }
}

/** The acknowledgements of cdk-nag's findings that a one-shot seeding instance earns by design. */
function acknowledgeOneShotInstance(instance: ec2.Instance): void {
  Validations.of(instance).acknowledge({
    // The root volume is encrypted. cdk-nag 3.0's EBS rule throws on an instance without a launch template
    // when its stack also holds launch templates (cache nodes, clients), and reports the throw as this finding.
    id: 'AwsSolutions-EC26',
    reason: 'The only volume, the root volume, is encrypted (BlockDeviceMappings Ebs.Encrypted true); the rule ' +
      'fails with an error on instances without a launch template in stacks that also hold launch templates.',
  });
  Validations.of(instance).acknowledge({
    id: 'AwsSolutions-EC29',
    reason: 'A one-shot seeding instance that terminates itself when done: termination protection or an Auto ' +
      'Scaling group (which would start it again) would defeat that.',
  });
}

/**
 * Appends a hash of what the instance is made of (user data, image, type, network, volumes, tags) to its logical
 * id. A change then replaces the instance, which seeds again, instead of an in-place update of an instance that has
 * already terminated (which would fail). The user data names the logical id (its CloudFormation signal): while the
 * hash is computed, that name resolves to the id without the hash, so the hash does not depend on itself.
 */
function replaceOnChange(cfn: ec2.CfnInstance): void {
  const original = Stack.of(cfn).getLogicalId(cfn);
  let hashing = false;
  cfn.overrideLogicalId(Lazy.uncachedString({
    produce: (context) => {
      if (hashing) return original;
      hashing = true;
      let digest: string;
      try {
        const parts = [cfn.userData, cfn.imageId, cfn.instanceType, cfn.subnetId, cfn.securityGroupIds,
          cfn.iamInstanceProfile, cfn.blockDeviceMappings, cfn.metadataOptions, cfn.tags.renderTags()];
        digest = crypto.createHash('sha256').update(JSON.stringify(context.resolve(parts))).digest('hex');
      } finally {
        hashing = false;
      }
      return `${original}${digest.slice(0, 16).toUpperCase()}`;
    },
  }));
}

/**
 * The seeder's source, checked: `Invalid source: is required` when it is missing, and refused when it is not made by
 * a factory of `SeedSource` (from JavaScript, which has no types: any object, one with a `bind` method included).
 */
function checkSource(scope: IConstruct, source: SeedSource | undefined): SeedSource {
  if (source === undefined || source === null) throw propError(scope, 'source', `is required: ${FACTORIES}.`);
  if (typeof (source as { _bind?: unknown })._bind !== 'function') throw propError(scope, 'source', `must be made by ${FACTORIES}.`);
  return source;
}

/** Checks the props; throws `Invalid <prop>: ...` naming what to change. */
export function validateDataSeederProps(scope: IConstruct, p: DataSeederProps): void {
  const int = (name: keyof DataSeederProps, v: number | undefined, min: number, max: number) => {
    if (v === undefined || Token.isUnresolved(v)) return;
    if (!Number.isInteger(v) || v < min || v > max) throw propError(scope, name, `must be a whole number from ${min} to ${max}, got ${v}.`);
  };
  int('workers', p.workers, 1, 512);
  int('filesPerPart', p.filesPerPart, 1, 99999);
  const target = p.targetPath ?? DATA_SEEDER_DEFAULTS.targetPath;
  if (!Token.isUnresolved(target) && (!PATH_RE.test(target) || DOT_SEGMENT_RE.test(target))) {
    throw propError(scope, 'targetPath', `must be an absolute path in the file system (letters, digits, . _ - /), got '${target}'.`);
  }
  if (p.version !== undefined && !Token.isUnresolved(p.version) && !/^[A-Za-z0-9._:+-]{0,64}$/.test(p.version)) {
    throw propError(scope, 'version', `must be up to 64 of A-Z a-z 0-9 . _ : + -, got '${p.version}'.`);
  }
  const range = (name: keyof DataSeederProps, d: Duration | undefined, min: Duration, max: Duration) => {
    if (!d) return;
    knownAtSynth(scope, name, d);
    const s = d.toSeconds({ integral: false });
    if (!Number.isInteger(s) || s < min.toSeconds() || s > max.toSeconds()) {
      throw propError(scope, name, `must be whole seconds from ${min.toHumanString()} to ${max.toHumanString()}, got ${d.toHumanString()}.`);
    }
  };
  // CloudFormation waits at most 12 hours for a signal.
  range('signalTimeout', p.signalTimeout, Duration.minutes(5), Duration.hours(12));
  range('mountTimeout', p.mountTimeout, Duration.seconds(10), Duration.hours(1));
  range('progressInterval', p.progressInterval, Duration.seconds(1), Duration.hours(1));
}
