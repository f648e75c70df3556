import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import { Construct } from 'constructs';
import { allowFromConsumerSide } from '../private/connections';
import { knownAtSynth, propError } from '../private/errors';
import { checkFleetExport, FleetExport } from './fleet-export';

/** Properties of `EksFleetVolume`. */
export interface EksFleetVolumeProps {
  /** What the volume mounts: `FleetExport.cacheFleet(fleet)` or `FleetExport.mirror(fleet, mirrorPath)`. */
  readonly source: FleetExport;

  /**
   * The name of the PersistentVolume and of its claim: a DNS label, unique among the cluster's persistent volumes.
   *
   * @default - the construct's id in lower case
   */
  readonly volumeName?: string;

  /**
   * The namespace of the PersistentVolumeClaim, which pods of that namespace name in their volumes.
   *
   * @default 'default'
   */
  readonly claimNamespace?: string;

  /**
   * The cluster the manifests are applied to, through aws-eks' kubectl provider.
   *
   * @default - none: apply `manifests` yourself (GitOps)
   */
  readonly cluster?: eks.ICluster;

  /**
   * Who mounts the volume, let into the fleet on the ports the mount uses: the nodes' security groups.
   * The kubelet mounts the volume on the node, from the node's own network interface, whatever the pod's groups.
   *
   * @default - the cluster's connections when `cluster` is given (its security group, which managed node groups use),
   * else no rule
   */
  readonly clients?: ec2.IConnectable[];
}

/** The defaults of `EksFleetVolumeProps` (test/defaults.test.ts). */
export const EKS_FLEET_VOLUME_DEFAULTS = {
  claimNamespace: 'default',
} as const;

/** Nominal size of the volume and its claim: Kubernetes requires one, NFS ignores it. */
const NOMINAL_CAPACITY = '1Gi';

/**
 * A static read-only Kubernetes PersistentVolume of a cache fleet's export or mirror, and a claim bound to it.
 * The kubelet mounts it over NFS on the node; FS-Cache, if wanted, runs there.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
 */
export class EksFleetVolume extends Construct {
  /** The name of the PersistentVolume and of its claim. */
  public readonly volumeName: string;
  /** The namespace of the claim. */
  public readonly claimNamespace: string;
  /** The NFS server the volume mounts: the fleet's endpoint. */
  public readonly server: string;
  /** The path the volume mounts from the server: the fleet's `exportPath`, or the mirror's `/mirror/<path>`. */
  public readonly remotePath: string;
  /** The NFS mount options, those of the fleet's EC2 clients (with `fsc` only when asked). */
  public readonly mountOptions: string[];
  /** The PersistentVolume and the PersistentVolumeClaim, as Kubernetes objects, to apply yourself or to read. */
  public readonly manifests: Record<string, any>[];
  /**
   * The manifest applied to `cluster`.
   *
   * @default - none, when no cluster is given
   */
  public readonly manifest?: eks.KubernetesManifest;

  constructor(scope: Construct, id: string, props: EksFleetVolumeProps) {
    super(scope, id);
    const source = checkFleetExport(this, 'source', props.source);
    this.volumeName = props.volumeName ?? id.toLowerCase();
    this.claimNamespace = props.claimNamespace ?? EKS_FLEET_VOLUME_DEFAULTS.claimNamespace;
    for (const [prop, value] of [['volumeName', this.volumeName], ['claimNamespace', this.claimNamespace]] as const) {
      knownAtSynth(this, prop, value, 'it is a Kubernetes name');
      if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(value)) {
        throw propError(this, prop, `must be a DNS label (1-63 lower-case letters, digits and hyphens, starting and ending with a letter or digit), got '${value}'.`);
      }
    }
    this.server = source.server;
    this.remotePath = source.remotePath;
    this.mountOptions = source.mountOptions;
    const labels = { 'app.kubernetes.io/managed-by': 'cdk-efs-cache' };
    this.manifests = [
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: this.volumeName, labels },
        spec: {
          capacity: { storage: NOMINAL_CAPACITY },
          accessModes: ['ReadOnlyMany'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          mountOptions: this.mountOptions,
          nfs: { server: this.server, path: this.remotePath, readOnly: true },
          // Only this claim binds it.
          claimRef: { namespace: this.claimNamespace, name: this.volumeName },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: this.volumeName, namespace: this.claimNamespace, labels },
        spec: {
          accessModes: ['ReadOnlyMany'],
          storageClassName: '',
          volumeName: this.volumeName,
          resources: { requests: { storage: NOMINAL_CAPACITY } },
        },
      },
    ];
    if (props.cluster) this.manifest = new eks.KubernetesManifest(this, 'Resource', { cluster: props.cluster, manifest: this.manifests });
    // The rules are made from the clients' side, as FsCacheClientLaunchTemplate makes its own.
    for (const client of props.clients ?? (props.cluster ? [props.cluster] : [])) {
      for (const port of source.ports) allowFromConsumerSide(client, props.source, ec2.Port.tcp(port), `NFS (TCP ${port}) from EKS nodes`);
    }
  }
}
