import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import * as efs from 'aws-cdk-lib/aws-efs';
import { Construct } from 'constructs';
import { describeValue, propError } from '../private/errors';
import { MountHelper } from './mount-helper';

export { MountHelper };

/** The options EFS recommends for NFS clients. */
export const RECOMMENDED_NFS_OPTIONS = ['nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport'];

/**
 * The local port of amazon-efs-utils' TLS tunnel where the library pins it (`tlsport=`), so that FS-Cache, which keys
 * its cache on the server's address and port, finds the disk cache again after a remount or reboot. The scripts name
 * no TLS port of their own (test/nfs/shared-facts.test.ts checks that, and `FsCacheClientProps.tlsPort`'s `@default`).
 */
export const EFS_UTILS_TLS_PORT = 20049;

/**
 * The options a mount helper needs ahead of the NFS options: with `MountHelper.EFS_UTILS` TLS and IAM (and
 * `tlsport=<tlsPort>` when given), with `MountHelper.NFS` none.
 */
export function helperOptions(helper: MountHelper, tlsPort?: number): string[] {
  if (helper !== MountHelper.EFS_UTILS) return [];
  return ['tls', 'iam', ...(tlsPort !== undefined ? [`tlsport=${tlsPort}`] : [])];
}

/** `fs-id.efs.REGION.URL_SUFFIX` of a file system. */
export function efsDnsName(fileSystem: efs.IFileSystem): string {
  const stack = Stack.of(fileSystem);
  return `${fileSystem.fileSystemId}.efs.${stack.region}.${stack.urlSuffix}`;
}

/** Whole seconds of a duration, as a string for a mount option or script parameter. */
export function seconds(d: Duration): string {
  return String(d.toSeconds({ integral: true }));
}

/** A systemd time span (`90min`, `6h`) for a duration of whole minutes. */
export function systemdTimeSpan(d: Duration): string {
  const minutes = d.toMinutes({ integral: true });
  return minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}min`;
}

/** File systems whose policy this library made TLS-only (OriginFileSystem): a mount without TLS is refused there. */
const TLS_ONLY = new WeakSet<efs.IFileSystem>();

/** Marks a file system whose policy denies non-TLS access. */
export function markTlsOnly(fileSystem: efs.IFileSystem): void {
  TLS_ONLY.add(fileSystem);
}

/** The props of one construct that decide how it mounts a file system, by name (for the error). */
export interface TlsMountProps {
  readonly helperProp: string;
  readonly helper: MountHelper;
  readonly optionsProp?: string;
  /** Mount options the user gave (undefined: the construct's defaults, which carry tls with EFS_UTILS). */
  readonly options?: string[];
}

/**
 * Throws `Invalid <prop>` when a mount of a file system this library made TLS-only would not use TLS: its policy
 * would refuse the mount at boot. With `MountHelper.EFS_UTILS` and a custom image, warns that the image must bring
 * amazon-efs-utils unless it is Amazon Linux 2023 (Debian and Ubuntu package it nowhere).
 */
export function checkEfsMount(scope: Construct, fileSystem: efs.IFileSystem, p: TlsMountProps, customImage: boolean): void {
  if (!Object.values(MountHelper).includes(p.helper)) {
    throw propError(scope, p.helperProp, `must be MountHelper.EFS_UTILS or MountHelper.NFS, got ${describeValue(p.helper)}.`);
  }
  if (TLS_ONLY.has(fileSystem)) {
    if (p.helper !== MountHelper.EFS_UTILS) {
      throw propError(scope, p.helperProp, 'the file system was created by this library with a policy that denies non-TLS ' +
        'access, so a plain NFS mount would be refused at boot: use MountHelper.EFS_UTILS (mount -t efs -o tls).');
    }
    if (p.options && !p.options.includes('tls')) {
      throw propError(scope, p.optionsProp ?? 'mountOptions', 'must include tls: the file system was created by this ' +
        'library with a policy that denies non-TLS access, and amazon-efs-utils mounts without TLS unless told.');
    }
  }
  if (p.helper === MountHelper.EFS_UTILS && customImage) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:imageNeedsEfsUtils', 'machineImage: with MountHelper.EFS_UTILS ' +
      'the image must have amazon-efs-utils, or install it: Amazon Linux 2023 does from its core repository, but ' +
      'Debian and Ubuntu package it nowhere, and the bootstrap then stops with a FATAL line. Use an image with ' +
      'amazon-efs-utils built in (acknowledge this warning), or MountHelper.NFS where the origin allows non-TLS access.');
  }
}
