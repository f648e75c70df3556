import * as fs from 'fs';
import * as path from 'path';

/** One package of test/host/al2023/packages.json. */
interface Package {
  readonly name: string;
  readonly repository: 'core' | 'spal';
  readonly preinstalled?: boolean;
  readonly provides: string[];
  readonly usedBy: string[];
  readonly version: string;
  readonly sources: string[];
  readonly note?: string;
}

const ROOT = path.join(__dirname, '..', '..', '..');
export const DATA_FILE = path.join(ROOT, 'test', 'host', 'al2023', 'packages.json');
export const DOCS_FILE = path.join(ROOT, 'docs', 'al2023.md');

/** docs/al2023.md as the data file says it: `npx ts-node test/host/al2023/docs.ts --write` rewrites it. */
export function renderDocs(): string {
  const data = JSON.parse(fs.readFileSync(DATA_FILE, 'utf8')) as { sources: Record<string, string>; packages: Package[] };
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    '# Amazon Linux 2023: the packages the scripts install',
    '',
    '<!-- Generated from test/host/al2023/packages.json by `npx ts-node test/host/al2023/docs.ts --write`; a unit test fails when',
    'they differ. Edit the data file, not this page. -->',
    '',
    'On Amazon Linux 2023 (`ID=amzn` in /etc/os-release) the instance scripts install what is missing with',
    '`dnf -qy install`, one call per step, and ask `rpm -q` first, so a second run calls no dnf. cachefilesd and fpart',
    'are in the Supplementary Packages for Amazon Linux (SPAL), not in the core repository: the scripts install',
    '`spal-release` (from core) first, which adds that repository. SPAL needs release 2023.9.20251117 or later.',
    '',
    '| package | repository | the scripts rely on it for | used by | version | sources |',
    '|---|---|---|---|---|---|',
  ];
  for (const p of data.packages) {
    const srcs = p.sources.map((s) => {
      const where = data.sources[s];
      if (where === undefined) throw new Error(`al2023: ${p.name} cites unknown source ${s}`);
      return where.startsWith('http') ? `[${s}](${where})` : s;
    });
    lines.push(
      `| ${p.name}${p.preinstalled ? ' (on the image)' : ''} | ${p.repository === 'spal' ? 'SPAL' : 'core'} | ` +
        `${p.provides.map((x) => `\`${cell(x)}\``).join(', ')} | ${p.usedBy.map(cell).join('; ')} | ${cell(p.version)} | ` +
        `${srcs.join(', ')}${p.note ? `. ${cell(p.note)}` : ''} |`,
    );
  }
  lines.push('', 'Sources:', '');
  for (const [k, v] of Object.entries(data.sources)) lines.push(`- ${k}: ${v.startsWith('http') ? `<${v}>` : v}`);
  lines.push(
    '',
    '## What runs, and what it does not prove',
    '',
    '`bash test/host/al2023/run.sh` (a step of `npm test`, as root) runs the scripts\' own package functions (each tier\'s',
    '`install_packages`, `ensure_aws_cli`, `ensure_efs_utils`, `metrics_install`, `label_cache_dir`) in a chroot of',
    'Debian 12 with AL2023\'s /etc/os-release and Debian\'s dnf 4 and rpm, against two local repositories, core and',
    'SPAL, of stand-in RPMs with the names above (each installs stubs of the files listed). It asserts the exact dnf',
    'calls and their order, the packages installed and the commands on PATH, no dnf call on a second run, no apt or',
    'dpkg call, and that cachefilesd or fpart asked for before spal-release ends the run with',
    '`efs-cache: FATAL: could not install ...`. Nothing else of a bootstrap runs there (disks, mounts, systemd: the',
    'lab does those on Debian).',
    '',
    'Not proved here: that AL2023\'s real repositories carry these names for both architectures (cachefilesd on',
    'aarch64 in particular), their versions, their dependencies, the real `spal-release` repository definition, GPG',
    'checks (the stand-ins are unsigned), and the behaviour of the real programs. A deployment on AWS shows those.',
    '',
  );
  return lines.join('\n');
}

if (require.main === module) {
  if (process.argv.includes('--write')) fs.writeFileSync(DOCS_FILE, renderDocs());
  else process.stdout.write(renderDocs());
}
