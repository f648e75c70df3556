import { Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import { IConstruct } from 'constructs';
import { isEndpoint } from '../nfs/endpoint';
import { MOUNT_HELPER_TYPE, NFS_VERSION_NUMBER } from '../nfs/enum-values';
import { efsDnsName, helperOptions, MountHelper, RECOMMENDED_NFS_OPTIONS } from '../nfs/mount';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_MOUNTD_PORT, NFS_PORT } from '../nfs/ports';
import { parseCidr } from '../private/cidr';
import { allowFromConsumerSide } from '../private/connections';
import { knownAtSynth, propError } from '../private/errors';
import { DOT_SEGMENT_RE, PATH_RE } from '../private/paths';

/**
 * The TCP ports of an NFS server origin that the nodes' security group opens to `peer` and their mounts name.
 * NFSv4 uses `nfs` alone; the others are for NFSv3 only.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
 */
export interface NfsServerPorts {
  /**
   * The server's nfsd.
   *
   * @default 2049
   */
  readonly nfs?: number;

  /**
   * NFSv3 only: the server's rpc.mountd, which the nodes name in `mountport=` (so no rpcbind query finds it). A Linux
   * server picks a random port unless nfs.conf pins it (`[mountd] port=20048`); FSx for NetApp ONTAP answers on 635.
   *
   * @default 20048
   */
  readonly mountd?: number;

  /**
   * NFSv3 only: whether the nodes may reach the server's rpcbind (TCP 111). The nodes' mounts name nfsd's and mountd's
   * ports and need none; the kernel's lock manager finds the server's lockd through rpcbind (no mount option names that
   * port), so `lockd` needs it.
   *
   * @default - true with `lockd`, false without
   */
  readonly rpcbind?: boolean;

  /**
   * NFSv3 only: the server's lockd (NLM) TCP port, which lets locks that clients take through a node reach the origin.
   * Kernels 6.12.117 and 7.x refuse such locks at the node.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   * @default - no lockd: the nodes mount with `nolock`
   */
  readonly lockd?: number;
}

/** The defaults of `NfsServerPorts` (test/defaults.test.ts): the ports the nodes serve on themselves. */
export const NFS_SERVER_PORTS_DEFAULTS = {
  nfs: NFS_PORT,
  mountd: NFS_MOUNTD_PORT,
} as const;

/** Options of an EFS file system as the origin of a cache fleet (`CacheOrigin.efs`). */
export interface EfsOriginOptions {
  /**
   * How the nodes mount the file system. `MountHelper.NFS` (plain NFSv4.1, no TLS) only where the file system allows
   * non-TLS access: one created by this library (`OriginFileSystem`, `CachedFileSystem`) denies it, and is refused
   * with it at synth.
   *
   * @default MountHelper.EFS_UTILS - TLS and IAM, which a file system created by this library requires
   */
  readonly mountHelper?: MountHelper;
}

/** The defaults of `EfsOriginOptions` (test/defaults.test.ts). */
export const EFS_ORIGIN_DEFAULTS = {
  mountHelper: MountHelper.EFS_UTILS,
} as const;

/** An NFS server as the origin of a cache fleet (`CacheOrigin.nfsServer`). */
export interface NfsServerOptions {
  /**
   * The server's DNS name or IPv4 address, as the nodes mount it (`<host>:<exportPath>`).
   * Not `localhost`, loopback or link-local: on a node those are the node itself or the metadata service.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  readonly host: string;

  /**
   * The absolute path the server exports (`/` allowed), as its clients mount it with `nfsVersion`.
   * The fleet's `originPath` is a path below it.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  readonly exportPath: string;

  /** The NFS version the nodes mount the server with. */
  readonly nfsVersion: NfsVersion;

  /**
   * The server's ports the nodes reach (TCP only).
   *
   * @default - nfsd on 2049; with NFSv3 also rpc.mountd on 20048, and neither rpcbind nor lockd
   */
  readonly ports?: NfsServerPorts;

  /**
   * Where the server is: its security group (in the VPC or a peered one), or its network (`ec2.Peer.ipv4(...)`).
   * A network gets only the nodes' egress opened to it: the server's own firewall is yours.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  readonly peer: ec2.IPeer;
}

/**
 * What a cache fleet caches: an EFS file system, or an NFS server given by host, export path and version.
 * One value, so a fleet cannot name both or neither, and the mount helper, options, ports and IAM follow from it.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
 */
export class CacheOrigin implements ec2.IConnectable {
  /**
   * An EFS file system, created anywhere or imported, which the nodes mount over NFSv4.1 with `options.mountHelper`.
   * Their role is granted read-only EFS client access, and the file system's security group lets them in on TCP 2049.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  public static efs(fileSystem: efs.IFileSystem, options: EfsOriginOptions = {}): CacheOrigin {
    return new CacheOrigin(efsDnsName(fileSystem), '/', NfsVersion.NFS_V4_1, fileSystem.connections, fileSystem, undefined, undefined,
      options.mountHelper ?? EFS_ORIGIN_DEFAULTS.mountHelper);
  }

  /**
   * An NFS server (a Linux nfsd, FSx for NetApp ONTAP or OpenZFS, a NAS on premises) that the nodes reach.
   * The nodes mount it read-only with plain NFS of `nfsVersion`, without TLS, and their role gets no
   * storage permission.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  public static nfsServer(options: NfsServerOptions): CacheOrigin {
    return new CacheOrigin(options.host, options.exportPath, options.nfsVersion, options.peer.connections, undefined, options.peer,
      { ...options.ports }, undefined);
  }

  /** The server the nodes mount: the file system's DNS name, or the NFS server's host. */
  public readonly server: string;
  /** The path the server exports: `/` for EFS. */
  public readonly exportPath: string;
  /** The NFS version the nodes mount the origin with: NFSv4.1 for EFS. */
  public readonly nfsVersion: NfsVersion;
  /** What the nodes are let into: the file system's connections, or the peer's. */
  public readonly connections: ec2.Connections;
  /** The file system, for an EFS origin. */
  public readonly fileSystem?: efs.IFileSystem;
  /** Where the NFS server is, for the security groups (an NFS server origin). */
  public readonly peer?: ec2.IPeer;
  /**
   * The NFS server's ports, as given (an NFS server origin).
   *
   * @default - the defaults of `NfsServerPorts`
   */
  public readonly ports?: NfsServerPorts;
  /**
   * How the nodes mount an EFS origin (`EfsOriginOptions.mountHelper`, applied with its default).
   *
   * @default - none: an NFS server origin, which the nodes mount with plain NFS of its version
   */
  public readonly mountHelper?: MountHelper;

  private constructor(server: string, exportPath: string, nfsVersion: NfsVersion, connections: ec2.Connections,
    fileSystem: efs.IFileSystem | undefined, peer: ec2.IPeer | undefined, ports: NfsServerPorts | undefined,
    mountHelper: MountHelper | undefined) {
    this.server = server;
    this.exportPath = exportPath;
    this.nfsVersion = nfsVersion;
    this.connections = connections;
    this.fileSystem = fileSystem;
    this.peer = peer;
    this.ports = ports;
    this.mountHelper = mountHelper;
  }
}

/** The port of rpcbind, which NFSv3's lock manager asks for the server's lockd. */
export const RPCBIND_PORT = 111;

/** One TCP port of an origin that the nodes reach, with the description of its security group rules. */
export interface OriginPort {
  readonly port: number;
  readonly description: string;
}

/** The ports of an NFS server origin, its defaults applied, in the order their rules are made. */
export function nfsServerPorts(origin: CacheOrigin): OriginPort[] {
  const p = origin.ports ?? {};
  if (origin.nfsVersion !== NfsVersion.NFS_V3) return [{ port: p.nfs ?? NFS_SERVER_PORTS_DEFAULTS.nfs, description: 'NFS from the cache nodes' }];
  return [
    { port: p.nfs ?? NFS_SERVER_PORTS_DEFAULTS.nfs, description: 'NFS from the cache nodes' },
    { port: p.mountd ?? NFS_SERVER_PORTS_DEFAULTS.mountd, description: 'NFSv3 mountd from the cache nodes' },
    ...(rpcbindOn(p) ? [{ port: RPCBIND_PORT, description: 'rpcbind (NFSv3 lock manager) from the cache nodes' }] : []),
    ...(p.lockd !== undefined ? [{ port: p.lockd, description: 'NFSv3 lockd (NLM) from the cache nodes' }] : []),
  ];
}

function rpcbindOn(p: NfsServerPorts): boolean {
  return p.rpcbind ?? p.lockd !== undefined;
}

/**
 * Lets the nodes' group reach the origin: the EFS file system's group on TCP 2049 (both rules made from the nodes'
 * side), or an NFS server's peer on each of its ports: a security group through rules from the nodes'
 * side, a network through the nodes' egress alone.
 */
export function allowNodesToOrigin(nodes: ec2.SecurityGroup, origin: CacheOrigin): void {
  if (origin.fileSystem) {
    allowFromConsumerSide(nodes, origin.fileSystem, ec2.Port.tcp(NFS_PORT), 'NFS from the EFS cache nodes');
    return;
  }
  const peer = origin.peer!;
  for (const { port, description } of nfsServerPorts(origin)) {
    if (peer.connections.securityGroups.length > 0) {
      allowFromConsumerSide(nodes, peer, ec2.Port.tcp(port), description);
    } else {
      nodes.addEgressRule(peer, ec2.Port.tcp(port), `${description} to the origin`);
    }
  }
}

/**
 * The options the nodes mount the origin with ahead of the fleet's own (read-only, attribute caching): for EFS, the
 * helper's (TLS and IAM; `tlsPort` pinned where given) and the options EFS recommends; for an NFS server, the version,
 * its ports and the same transfer and timeout options, without `noresvport` (a server's default `secure` exports take
 * requests from reserved ports only) and without TLS.
 */
export function originBaseOptions(origin: CacheOrigin, helper: MountHelper, tlsPort?: number): string[] {
  if (origin.fileSystem) return [...helperOptions(helper, tlsPort), ...RECOMMENDED_NFS_OPTIONS];
  const p = origin.ports ?? {};
  const nfs = p.nfs ?? NFS_SERVER_PORTS_DEFAULTS.nfs;
  const transfer = ['rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2'];
  if (origin.nfsVersion !== NfsVersion.NFS_V3) {
    return [`nfsvers=${NFS_VERSION_NUMBER[origin.nfsVersion]}`, ...(nfs !== NFS_PORT ? [`port=${nfs}`] : []), ...transfer];
  }
  return [
    'nfsvers=3', 'proto=tcp', `port=${nfs}`, 'mountproto=tcp', `mountport=${p.mountd ?? NFS_SERVER_PORTS_DEFAULTS.mountd}`, 'mountvers=3',
    p.lockd !== undefined ? 'lock' : 'nolock', ...transfer,
  ];
}

/** The mount type of the nodes' origin mounts: the helper's for EFS, `nfs` (NFSv3) or `nfs4` for an NFS server. */
export function originMountType(origin: CacheOrigin, helper: MountHelper): string {
  if (origin.fileSystem) return MOUNT_HELPER_TYPE[helper];
  return origin.nfsVersion === NfsVersion.NFS_V3 ? 'nfs' : 'nfs4';
}

/** The path the nodes mount on the server: `originPath` in EFS, or below an NFS server's export path. */
export function originServerPath(origin: CacheOrigin, originPath: string): string {
  if (origin.fileSystem) return originPath;
  if (originPath === '/') return origin.exportPath;
  return `${origin.exportPath === '/' ? '' : origin.exportPath}${originPath}`;
}

/**
 * What the export's fsid is derived from besides the fleet's path: `originPath` for EFS (what every deployed
 * EFS fleet's fsid is made of: it must not change), the server path with an `nfs:` prefix for an NFS server, so an origin of either kind never
 * shares an fsid with one of the other at the same construct path (the host is left out: it may be a token).
 */
export function originFsidKey(origin: CacheOrigin, originPath: string): string {
  return origin.fileSystem ? originPath : `nfs:${originServerPath(origin, originPath)}`;
}

/**
 * The fleet's origin, checked: `Invalid origin: is required` when it is missing (from JavaScript, which has no types:
 * a caller giving a removed prop instead), `Invalid origin...` for an NFS server whose host, export path,
 * ports or peer cannot work.
 */
export function resolveOrigin(scope: IConstruct, props: { readonly origin: CacheOrigin }): CacheOrigin {
  const origin = props.origin;
  if (origin === undefined || origin === null) {
    throw propError(scope, 'origin', 'is required: CacheOrigin.efs(fileSystem) caches an EFS file system, ' +
      'CacheOrigin.nfsServer({ host, exportPath, nfsVersion, peer }) an NFS server.');
  }
  if (!origin.fileSystem) validateNfsServer(scope, origin);
  return origin;
}

function validateNfsServer(scope: IConstruct, origin: CacheOrigin): void {
  if (origin.nfsVersion === undefined || origin.nfsVersion === null) {
    // From JavaScript, which has no types: a caller may give another prop (such as a removed `version`) instead.
    throw propError(scope, 'origin.nfsVersion', 'is required: the NFS version the nodes mount the server with, ' +
      'NfsVersion.NFS_V3, NFS_V4_1 or NFS_V4_2.');
  }
  if (!Object.values(NfsVersion).includes(origin.nfsVersion)) {
    throw propError(scope, 'origin.nfsVersion', `must be NfsVersion.NFS_V3, NFS_V4_1 or NFS_V4_2, got '${origin.nfsVersion}'.`);
  }
  if (!Token.isUnresolved(origin.server) && !isEndpoint(origin.server)) {
    throw propError(scope, 'origin.host', 'must be the server\'s DNS name (such as \'nas.example.internal\') or IPv4 address ' +
      `(the nodes mount <host>:<exportPath>; an IPv6 address needs a DNS name), got '${origin.server}'.`);
  }
  if (!Token.isUnresolved(origin.server) && isNodeItself(origin.server)) {
    throw propError(scope, 'origin.host', `must name the NFS server as the nodes reach it, got '${origin.server}': on a node that ` +
      'is the node itself (loopback) or the instance metadata service (link-local), never a server. Give its DNS name or address.');
  }
  knownAtSynth(scope, 'origin.exportPath', origin.exportPath, 'the fleet\'s fsid is derived from it');
  const e = origin.exportPath;
  if (!PATH_RE.test(e) || DOT_SEGMENT_RE.test(e) || e.includes('//') || (e !== '/' && e.endsWith('/'))) {
    throw propError(scope, 'origin.exportPath', 'must be the absolute path the server exports (letters, digits, . _ - /; ' +
      `no trailing /, // or . or .. segment; / itself allowed), got '${e}'.`);
  }
  const ports = origin.ports ?? {};
  for (const name of ['nfs', 'mountd', 'lockd'] as const) {
    const v = ports[name];
    if (v === undefined) continue;
    knownAtSynth(scope, `origin.ports.${name}`, v, 'it is a security group rule and a mount option');
    if (!Number.isInteger(v) || v < 1 || v > 65535) {
      throw propError(scope, `origin.ports.${name}`, `must be a TCP port, a whole number from 1 to 65535, got ${v}.`);
    }
  }
  if (origin.nfsVersion !== NfsVersion.NFS_V3) {
    const v3only = (['mountd', 'rpcbind', 'lockd'] as const).find((n) => ports[n] !== undefined);
    if (v3only) {
      throw propError(scope, `origin.ports.${v3only}`, `applies to NfsVersion.NFS_V3 only: NFSv${NFS_VERSION_NUMBER[origin.nfsVersion]} needs nfsd's ` +
        'port alone (ports.nfs).');
    }
  }
  if (ports.lockd !== undefined && ports.rpcbind === false) {
    throw propError(scope, 'origin.ports.rpcbind', 'cannot be false with lockd: the kernel\'s lock manager finds the server\'s ' +
      'lockd through rpcbind (no mount option names its port). Leave rpcbind out, or lockd.');
  }
  const used = nfsServerPorts(origin);
  const twice = used.find((u, i) => used.findIndex((w) => w.port === u.port) !== i);
  if (twice) throw propError(scope, 'origin.ports', `names port ${twice.port} twice: nfsd, mountd, rpcbind and lockd each have a port of their own.`);
  checkPeer(scope, origin);
}

function checkPeer(scope: IConstruct, origin: CacheOrigin): void {
  const peer = origin.peer!;
  if (peer.connections.securityGroups.length > 0) return;
  const rule = peer.toEgressRuleConfig() as { cidrIp?: string; cidrIpv6?: string };
  const cidr = rule.cidrIp ?? rule.cidrIpv6;
  if (cidr === undefined || Token.isUnresolved(cidr)) return;
  if (/\/0+$/.test(cidr)) {
    throw propError(scope, 'origin.peer', `${cidr} would open the origin's ports to every address: name the server's network ` +
      '(ec2.Peer.ipv4(\'203.0.113.0/24\'), or /32 for the server alone) or its security group.');
  }
  const block = parseCidr(scope, 'origin.peer', cidr);
  const host = origin.server;
  if (block.version !== 4 || Token.isUnresolved(host) || !/^[0-9.]+$/.test(host)) return;
  const address = host.split('.').reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
  const mask = ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - block.prefix)) - 1n);
  if ((address & mask) !== block.address) {
    throw propError(scope, 'origin.peer', `${cidr} does not hold the host ${host}: the nodes' security group would not let ` +
      'them reach it. Name the network the server is in.');
  }
}

/**
 * Whether a host, seen from a node, is the node itself or not a server at all: `localhost` (and names under it),
 * loopback 127.0.0.0/8, 0.0.0.0, and link-local 169.254.0.0/16 (the metadata service, the Amazon DNS and time servers).
 */
function isNodeItself(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^(127\.|169\.254\.|0\.0\.0\.0$)/.test(h);
}
