import { CfnResource, Reference, Stack, Token, Tokenization } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { Construct, IConstruct } from 'constructs';
import { isEndpoint } from '../nfs/endpoint';
import { allowFromConsumerSide } from '../private/connections';
import { describeValue, knownAtSynth, propError } from '../private/errors';
import { checkFleetExport, FleetExport, ResolvedFleetExport } from './fleet-export';

/** Properties of `EcsFleetVolume`. */
export interface EcsFleetVolumeProps {
  /**
   * The task definition that gets the volume: one for EC2 or ECS Anywhere, never one that may run on Fargate.
   * Fargate mounts EFS (and S3 Files) only: give such tasks an EFS volume of the origin instead.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
   */
  readonly taskDefinition: ecs.TaskDefinition;

  /** What the volume mounts: `FleetExport.cacheFleet(fleet)` or `FleetExport.mirror(fleet, mirrorPath)`. */
  readonly source: FleetExport;

  /**
   * The name of the volume in the task definition: up to 255 letters, digits, hyphens and underscores.
   *
   * @default - the construct's id
   */
  readonly volumeName?: string;

  /**
   * Who mounts the volume, let into the fleet on the ports the mount uses: the container instances' security groups.
   * Docker mounts the volume on the host, from the instance's own network interface, even for `awsvpc` tasks.
   *
   * @default - no rule: let the instances into the fleet yourself
   */
  readonly clients?: ec2.IConnectable[];

  /**
   * TCP connections of the volume's mount (Linux's `nconnect`, a whole number from 1 to 16, known at synth).
   * One flow between two instances carries about 5 Gbit/s: raise it for hosts with more bandwidth than that.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md#per-flow-limits
   * @default - no nconnect option (one connection): measured at only 1.2x for nconnect=4 so far, in an emulated lab
   */
  readonly nconnect?: number;
}

/**
 * A read-only volume of an ECS task definition that mounts a cache fleet's export or mirror over NFS.
 * Docker's `local` driver mounts it on the container instance when a task starts; FS-Cache, if wanted, runs there.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
 */
export class EcsFleetVolume extends Construct {
  /** The volume's name in the task definition: the `sourceVolume` of the containers' mount points. */
  public readonly volumeName: string;
  /** The NFS server the volume mounts: the fleet's endpoint. */
  public readonly server: string;
  /** The path the volume mounts from the server: the fleet's `exportPath`, or the mirror's `/mirror/<path>`. */
  public readonly remotePath: string;
  /** The NFS mount options, those of the fleet's EC2 clients (with `fsc` only when asked, and `nconnect` when given). */
  public readonly mountOptions: string[];

  constructor(scope: Construct, id: string, props: EcsFleetVolumeProps) {
    super(scope, id);
    const td = props.taskDefinition;
    if (!(td instanceof ecs.TaskDefinition)) throw propError(this, 'taskDefinition', 'must be an ecs.TaskDefinition (an Ec2TaskDefinition, or one for EC2).');
    if (td.isFargateCompatible) {
      throw propError(this, 'taskDefinition', `${td.node.path} may run on Fargate, which mounts only EFS (and S3 Files), never an NFS server such as ` +
        'a cache fleet. Give Fargate tasks an EFS volume of the origin (efsVolumeConfiguration), or S3 Files for data in S3; ' +
        'mount the fleet from a task definition for EC2 only (ecs.Ec2TaskDefinition, or compatibility: ecs.Compatibility.EC2).');
    }
    const source = checkFleetExport(this, 'source', props.source, props.nconnect);
    this.volumeName = props.volumeName ?? id;
    knownAtSynth(this, 'volumeName', this.volumeName, 'containers name it in their mount points');
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(this.volumeName)) {
      throw propError(this, 'volumeName', `must be 1-255 letters, digits, hyphens and underscores, got '${this.volumeName}'.`);
    }
    refuseSameName(this, td, this.volumeName);
    this.server = source.server;
    this.remotePath = source.remotePath;
    this.mountOptions = source.mountOptions;
    td.addVolume({
      name: this.volumeName,
      dockerVolumeConfiguration: {
        driver: 'local',
        scope: ecs.Scope.TASK,
        // The local driver hands these to mount(2): `addr=` names the server (a DNS name Docker resolves when it
        // mounts), `device` the path, the rest are the kernel's NFS options.
        driverOpts: localDriverOptions(this, props.source, source),
      },
    });
    // The rules are made from the clients' side, as FsCacheClientLaunchTemplate makes its own.
    for (const client of props.clients ?? []) {
      for (const port of source.ports) allowFromConsumerSide(client, props.source, ec2.Port.tcp(port), `NFS (TCP ${port}) from ECS container instances`);
    }
  }

  /** Mounts the volume read-only at `containerPath` in `container`, a container of the volume's task definition. */
  public addMountPoint(container: ecs.ContainerDefinition, containerPath: string): void {
    container.addMountPoints({ sourceVolume: this.volumeName, containerPath, readOnly: true });
  }
}

/**
 * Deploy-time values the local driver's options may hold: attributes that AWS makes, whose form it fixes (a load
 * balancer's DNS name: the endpoint of a fleet with `FanOut.networkLoadBalancer()`, of this app or another stack of it).
 */
const AWS_MADE_NAMES: Record<string, string[]> = {
  'AWS::ElasticLoadBalancingV2::LoadBalancer': ['DNSName'],
};

/**
 * The options of Docker's `local` driver for a mount of `source`: `type=nfs`, `device=:<path>` and
 * `o=addr=<server>,<option>,...`. Docker splits `o` on commas and hands each part to mount(2) as an option, with no
 * check of its own, so no part may hold a comma, `=` or a space it was not given: each value is checked at synth, and
 * a deploy-time value (a parameter, an import, an SSM value) is refused unless AWS makes it (`AWS_MADE_NAMES`).
 * Throws `Invalid source`.
 */
function localDriverOptions(scope: IConstruct, given: FleetExport, source: ResolvedFleetExport): Record<string, string> {
  const { fleet, mirrorPath } = given;
  const instead = 'or mount a CacheFleet of this app (its endpoint and paths are made at synth, or its load balancer\'s DNS name).';
  const server = source.server;
  if (Token.isUnresolved(server) ? !madeByAws(server) : !isEndpoint(server)) {
    throw propError(scope, 'source', `the endpoint of ${fleet.node.path} is ${describeValue(server, scope)}: Docker's local driver reads it ` +
      'in the volume\'s comma-separated mount options (o=addr=<endpoint>,...) unchecked, where a comma or = would add options. ' +
      `${Token.isUnresolved(server) ? 'Give the endpoint as a literal to CacheFleet.fromCacheFleetAttributes ' +
        '(a DNS name such as \'nfs.efs-cache.internal\', or an IPv4 address), ' : 'Give a DNS name or IPv4 address, '}${instead}`);
  }
  const pathProp = mirrorPath === undefined ? 'exportPath' : `mirrorExports[].exportPath of '${mirrorPath}'`;
  if (Token.isUnresolved(source.remotePath) || !/^\/[A-Za-z0-9._/-]+$/.test(source.remotePath)) {
    throw propError(scope, 'source', `the ${pathProp} of ${fleet.node.path} is ${describeValue(source.remotePath, scope)}: Docker's local ` +
      'driver passes it to mount(2) in the volume\'s device option (device=:<path>) unchecked. Give it as a literal to ' +
      `CacheFleet.fromCacheFleetAttributes (an absolute path of letters, digits, . _ - /), ${instead}`);
  }
  if (mirrorPath === undefined) {
    for (const [name, d] of [['attributeCacheTimeout', fleet.attributeCacheTimeout], ['directoryCacheTimeout', fleet.directoryCacheTimeout]] as const) {
      if (d.isUnresolved()) {
        throw propError(scope, 'source', `the ${name} of ${fleet.node.path} is known only at deploy time: it becomes mount options of the ` +
          'volume (ac*=<seconds>), which Docker\'s local driver takes unchecked. Give it as a literal Duration to ' +
          `CacheFleet.fromCacheFleetAttributes, ${instead}`);
      }
    }
  }
  // What the library writes itself; checked all the same, so that no option ever carries a second one.
  const bad = source.mountOptions.find((o) => Token.isUnresolved(o) || !/^[a-z0-9_]+(=[A-Za-z0-9_.]+)?$/.test(o));
  if (bad !== undefined) throw propError(scope, 'source', `the mount option ${describeValue(bad, scope)} is not one option of the form name or name=value.`);
  return { type: 'nfs', device: `:${source.remotePath}`, o: [`addr=${server}`, ...source.mountOptions].join(',') };
}

/** Whether a string with tokens is a host name made of AWS-made attributes (`AWS_MADE_NAMES`) and DNS labels only. */
function madeByAws(value: string): boolean {
  const fragments = Tokenization.reverseString(value);
  const made = fragments.tokens.every((t) => t instanceof Reference && t.target instanceof CfnResource &&
    (AWS_MADE_NAMES[t.target.cfnResourceType] ?? []).includes(t.displayName));
  // Each AWS-made name stands for one DNS label here; what the literal parts add must keep it a host name.
  const shape = fragments.mapTokens({ mapToken: () => 'a' }).join({ join: (a: unknown, b: unknown) => `${a}${b}` });
  return made && isEndpoint(String(shape));
}

/**
 * Refuses a second volume named `name` in `td` (ECS takes one volume per name, and the containers' mount points name
 * it): now for the volumes already there, and at synth for those added after. Throws `Invalid volumeName`.
 */
function refuseSameName(scope: Construct, td: ecs.TaskDefinition, name: string): void {
  const named = () => {
    const volumes = Stack.of(td).resolve((td.node.defaultChild as ecs.CfnTaskDefinition).volumes) as { name?: string }[] | undefined;
    return (volumes ?? []).filter((v) => v.name === name).length;
  };
  const why = (has: string) => `${td.node.path} ${has} volume named '${name}': ECS takes one volume per name, and the containers' ` +
    'mount points name it. Give each EcsFleetVolume of a task definition its own volumeName.';
  if (named() > 0) throw propError(scope, 'volumeName', why('already has a'));
  scope.node.addValidation({ validate: () => (named() > 1 ? [`Invalid volumeName: ${why('has another')}`] : []) });
}
