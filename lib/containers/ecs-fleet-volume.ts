import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { Construct } from 'constructs';
import { allowFromConsumerSide } from '../private/connections';
import { knownAtSynth, propError } from '../private/errors';
import { checkFleetExport, FleetExport } from './fleet-export';

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
  /** The NFS mount options, those of the fleet's EC2 clients (with `fsc` only when asked). */
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
    const source = checkFleetExport(this, 'source', props.source);
    this.volumeName = props.volumeName ?? id;
    knownAtSynth(this, 'volumeName', this.volumeName, 'containers name it in their mount points');
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(this.volumeName)) {
      throw propError(this, 'volumeName', `must be 1-255 letters, digits, hyphens and underscores, got '${this.volumeName}'.`);
    }
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
        driverOpts: { type: 'nfs', device: `:${this.remotePath}`, o: [`addr=${this.server}`, ...this.mountOptions].join(',') },
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
