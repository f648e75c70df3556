/**
 * The DataSeeder as the lab runs it: a stack with a seeder of an instance directory (and one of a directory that does
 * not exist), its user data as CDK rendered it, and the shell that makes and digests the trees it copies. Used by the
 * seeding proof of scenarios.lab.ts (in CI, a small tree) and by seeding.lab.ts (the benchmark, 3,000 files).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { DataSeeder, MountHelper, SeedSource } from '../../../../lib';
import { KEPT_CODE_DIR } from '../../../../lib/instance/user-data';
import { importedFs, newApp } from '../../../util';
import { CfnTemplate, keptCode, PSEUDO_VALUES, resolveUserData, Vm } from '../harness';

/** The directory of the loader VM that the seeder copies. */
export const SEED_SOURCE = '/srv/seed-src';

/** A tree: `dirs` directories of `files` random files of `bytes` each, `d<NN>/f<NNN>`. */
export interface TreeShape { readonly dirs: number; readonly files: number; readonly bytes: number }

/** Shell that makes DIR/d<NN>/f<NNN> in the shape given (two digits at least: d00 whatever the count). */
export function makeTree(dir: string, t: TreeShape): string {
  return `for d in $(seq -f '%02g' 0 ${t.dirs - 1}); do mkdir -p ${dir}/d$d && ` +
    `head -c ${t.files * t.bytes} /dev/urandom | split -b ${t.bytes} -a 3 -d - ${dir}/d$d/f; done`;
}

/**
 * Shell that prints one digest of a tree: names and contents of every file, in a stable order, and the name and target
 * of every symbolic link (a real tree has them: WordPress's as Debian packs it).
 */
export function treeDigest(dir: string): string {
  return `cd ${dir} && { find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum; ` +
    "find . -type l -printf '%p -> %l\\n' | LC_ALL=C sort; } | md5sum | cut -d' ' -f1";
}

/** The seeders' user data, ready to run on a loader VM with `bash <file> --no-shutdown`. */
export interface SeederScripts {
  /** The seeder of SEED_SOURCE into `targetPath`. */
  readonly seed: string;
  /** A seeder whose source directory does not exist. */
  readonly failing: string;
  /** Where `seed` copies to, under the file system's root. */
  readonly targetPath: string;
}

/**
 * Synthesizes the seeders (over an imported file system, mounted with plain NFS) and resolves their user data: one of
 * `source` (SEED_SOURCE unless given) into `targetPath`, one of a directory that does not exist.
 */
export function seederScripts(targetPath: string, source: string = SEED_SOURCE): SeederScripts {
  const stack = new Stack(newApp(), 'SeedLab');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const seeder = new DataSeeder(stack, 'Seeder', {
    vpc, fileSystem, source: SeedSource.instanceDirectory(source), targetPath, mountHelper: MountHelper.NFS,
    progressInterval: Duration.seconds(5),
  });
  const failing = new DataSeeder(stack, 'Failing', {
    vpc, fileSystem, source: SeedSource.instanceDirectory('/srv/no-such-dir'), targetPath: `${targetPath}-failing`, mountHelper: MountHelper.NFS,
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const logicalId = (s: DataSeeder) => stack.resolve((s.instance.node.defaultChild as ec2.CfnInstance).logicalId) as string;
  const userData = (s: DataSeeder) => resolveUserData(template, logicalId(s), PSEUDO_VALUES);
  return { seed: userData(seeder), failing: userData(failing), targetPath };
}

/**
 * Puts the seeders on a loader VM as /root/seed.sh and /root/failing.sh, with their code where the loader looks before
 * it fetches from S3 (proved against the emulator: aws.lab.ts), and the signal marked as sent (no CloudFormation here:
 * as after the first run on AWS).
 */
export async function installSeeders(loader: Vm, scripts: SeederScripts, seedFile = '/root/seed.sh'): Promise<void> {
  await loader.writeFile(seedFile, scripts.seed, 0o755);
  await loader.writeFile('/root/failing.sh', scripts.failing, 0o755);
  await loader.execOk(`mkdir -p -m 0700 ${KEPT_CODE_DIR}`);
  for (const userData of [scripts.seed, scripts.failing]) {
    const kept = keptCode(userData)!;
    await loader.writeFile(kept.path, kept.content, 0o600);
  }
  await loader.execOk('mkdir -p /var/lib/efs-cache && touch /var/lib/efs-cache/signalled');
}

/** Shell that changes four files of a tree made by makeTree (one replaced, one appended, one added, one only touched). */
export function changeFour(dir: string, bytes: number): string {
  return `head -c ${bytes} /dev/urandom > ${dir}/d00/f000 && echo changed >> ${dir}/d01/f002 && ` +
    `echo new > ${dir}/d00/new.txt && touch -d '2001-01-01' ${dir}/d01/f001`;
}

/**
 * Debian packages of the host's release, downloaded once from the Debian archive into the lab's cache
 * (`.lab-cache/<set>/`, one folder per set). Returns each package's file and version, in the order asked.
 */
export function debianPackages(set: string, names: readonly string[]): { name: string; file: string; version: string }[] {
  const dir = path.join(process.env.LAB_CACHE_DIR ?? path.resolve(__dirname, '..', '..', '..', '..', '.lab-cache'), set);
  fs.mkdirSync(dir, { recursive: true });
  const found = (name: string) => fs.readdirSync(dir).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  const missing = names.filter((n) => !found(n));
  if (missing.length) {
    const download = () => spawnSync('apt-get', ['download', '-q', ...missing], { cwd: dir, encoding: 'utf8' });
    let r = download();
    if (r.status !== 0) {
      // A machine whose package lists are older than the archive: read them again, once.
      spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8' });
      r = download();
    }
    const still = names.filter((n) => !found(n));
    if (r.status !== 0 || still.length) throw new Error(`apt-get download ${still.join(' ')} failed: ${r.stderr}`);
  }
  return names.map((name) => {
    const file = found(name)!;
    return { name, file: path.join(dir, file), version: decodeURIComponent(file.split('_')[1]) };
  });
}

/**
 * A real tree for the seeding benchmark: WordPress as Debian packs it (the `wordpress` package of the host's release:
 * about 2,500 files and 56 MB under /usr/share/wordpress, 936 of them PHP, and a few symbolic links), downloaded once
 * from the Debian archive into the lab's cache. Returns the package file and its version.
 */
export function wordpressPackage(): { file: string; version: string } {
  const [wp] = debianPackages('wordpress', ['wordpress']);
  return { file: wp.file, version: wp.version };
}

/** Shell that unpacks a WordPress package (written to the guest at `deb`) into `dir`, its /usr/share/wordpress. */
export function unpackWordpress(deb: string, dir: string): string {
  return `rm -rf /var/tmp/wpx && dpkg-deb -x ${deb} /var/tmp/wpx && mkdir -p $(dirname ${dir}) && ` +
    `mv /var/tmp/wpx/usr/share/wordpress ${dir} && rm -rf /var/tmp/wpx ${deb} && sync`;
}
