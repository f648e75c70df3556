import { Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import { Construct, IConstruct } from 'constructs';
import { allowFromConsumerSide } from '../private/connections';
import { describeValue, knownAtSynth, propError } from '../private/errors';
import { checkFleetExport, FleetExport, resourceAttributeOf } from './fleet-export';

/** Properties of `EksFleetVolume`. */
export interface EksFleetVolumeProps {
  /**
   * What the volume mounts: `FleetExport.cacheFleet(fleet)` or `FleetExport.mirror(fleet, mirrorPath)`. The fleet's
   * endpoint and paths are literals or its own load balancer's DNS name: an imported fleet's parameter is refused.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md#eks
   */
  readonly source: FleetExport;

  /**
   * The name of the PersistentVolume and of its claim: a DNS label, unique among the cluster's persistent volumes.
   * Two volumes of the app given the same `cluster` are refused the same name.
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

  /**
   * TCP connections of the volume's mount (Linux's `nconnect`, a whole number from 1 to 16, known at synth).
   * One flow between two instances carries about 5 Gbit/s: raise it for hosts with more bandwidth than that.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md#per-flow-limits
   * @default - no nconnect option (one connection): measured at only 1.2x for nconnect=4 so far, in an emulated lab
   */
  readonly nconnect?: number;
}

/** The defaults of `EksFleetVolumeProps` (test/defaults.test.ts). */
export const EKS_FLEET_VOLUME_DEFAULTS = {
  claimNamespace: 'default',
} as const;

/** Nominal size of the volume and its claim: Kubernetes requires one, NFS ignores it. */
const NOMINAL_CAPACITY = '1Gi';

/**
 * The deploy-time values a manifest may hold: attributes AWS writes in a format that cannot leave a JSON string (a
 * load balancer's DNS name: letters, digits, `.` and `-`).
 */
const TRUSTED_ATTRIBUTES: Record<string, string[]> = { 'AWS::ElasticLoadBalancingV2::LoadBalancer': ['DNSName'] };

/** The PersistentVolumes of each cluster, by app: their names are the cluster's (PersistentVolumes are not namespaced). */
const VOLUMES_BY_CLUSTER = new WeakMap<IConstruct, Map<string, string>>();

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
  /** The NFS mount options, those of the fleet's EC2 clients (with `fsc` only when asked, and `nconnect` when given). */
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
    const source = checkFleetExport(this, 'source', props.source, props.nconnect);
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
    checkManifestValues(this, props.source, source);
    if (props.cluster) claimVolumeName(this, props.cluster, this.volumeName);
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

/**
 * Throws `Invalid source` for a deploy-time value of the PersistentVolume other than a load balancer's DNS name: the
 * manifest is JSON (for aws-eks' kubectl provider) or YAML (GitOps) that CloudFormation would splice the value into as
 * it is, with no escaping, so a parameter or an import of an imported fleet could end its string and add keys.
 */
function checkManifestValues(scope: IConstruct, export_: FleetExport, values: { server: string; remotePath: string; mountOptions: string[] }): void {
  const fleet = export_.fleet;
  const what = `${fleet.node.path}'s`;
  const fix = 'Give the fleet as a CacheFleet of this app, or import it (CacheFleet.fromCacheFleetAttributes) with literal ' +
    'attributes, checked at synth.';
  const timers = [['attributeCacheTimeout', fleet.attributeCacheTimeout], ['directoryCacheTimeout', fleet.directoryCacheTimeout]] as const;
  for (const [name, d] of export_.mirrorPath === undefined ? timers : []) {
    if (d.isUnresolved()) {
      throw propError(scope, 'source', `${what} ${name} is a token (known at deploy time): the PersistentVolume's mountOptions name it in ` +
        `seconds, which must be known at synth. ${fix}`);
    }
  }
  const exportPath = export_.mirrorPath === undefined ? 'exportPath' : `mirrorExports[].exportPath of '${export_.mirrorPath}'`;
  const named: Array<[string, string]> = [['endpoint', values.server], [exportPath, values.remotePath],
    ...values.mountOptions.map((o): [string, string] => ['mount option', o])];
  for (const [name, value] of named) {
    if (!Token.isUnresolved(value)) continue;
    const source = resourceAttributeOf(value);
    if (source && TRUSTED_ATTRIBUTES[source.resourceType]?.includes(source.attribute)) continue;
    throw propError(scope, 'source', `${what} ${name} is ${describeValue(value, scope)}, which the PersistentVolume's manifest (JSON) would ` +
      `hold as it is: CloudFormation does not escape it, so a quote in it would end its string and could add keys. ${fix}`);
  }
}

/**
 * Records the PersistentVolume `name` on `cluster` for the app, and throws `Invalid volumeName` when another volume of
 * the app has it there: PersistentVolume names are the cluster's, and the second would take the first's volume.
 */
function claimVolumeName(scope: IConstruct, cluster: eks.ICluster, name: string): void {
  const root = scope.node.root;
  const volumes = VOLUMES_BY_CLUSTER.get(root) ?? new Map<string, string>();
  VOLUMES_BY_CLUSTER.set(root, volumes);
  // A cluster is known by its account, region and name (a literal, or the token of the same attribute).
  const stack = Stack.of(cluster);
  const key = JSON.stringify([stack.account, stack.region, cluster.clusterName, name]);
  const other = volumes.get(key);
  if (other !== undefined && other !== scope.node.path) {
    throw propError(scope, 'volumeName', `'${name}' is the name of the PersistentVolume of ${other} on the same cluster ` +
      `(${cluster.node.path}): PersistentVolume names are the cluster's, whatever the claims' namespaces. Give one of them another volumeName.`);
  }
  volumes.set(key, scope.node.path);
}
