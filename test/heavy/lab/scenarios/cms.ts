/**
 * A real CMS on the lab's VMs: WordPress as Debian packs it, made whole as WordPress's own release ships it (its
 * symbolic links into Debian's shared JavaScript and PHP packages resolved) with Debian's default theme for it, on the
 * origin; served by nginx and PHP-FPM on a web server whose database (MariaDB) is on the web server's own disk, as a
 * real deployment keeps it off the shared file system. The uploads (media) live beside the tree, not in it, so that a
 * mirror can serve the code while the uploads go through the re-export.
 * Used by the byte-identical page test of cms.lab.ts (in CI) and by the CMS benchmark (bench/cms.ts).
 */
import * as fs from 'fs';
import { CfnResource, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CacheFleet, CacheOrigin, Capacity, DiskCache, FsCacheClientLaunchTemplate, Mirror, MountHelper, MountSource, NfsVersion,
} from '../../../../lib';
import { importedFs, newApp } from '../../../util';
import { parameters } from '../../../util/user-data';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData, Vm } from '../harness';
import { debianPackages } from './seeding';
import { LAB_NVME_MODEL, LAB_SUBNET } from './stacks';

/** The site's name: every request carries it as its Host, so every mode renders the same URLs. */
export const CMS_HOST = 'wp.lab';

/** WordPress, the theme its Debian package recommends, and the packages its symbolic links point into. */
export const CMS_PACKAGES = ['wordpress', 'wordpress-theme-twentytwentythree', 'libjs-cropper', 'libjs-underscore', 'php-getid3'] as const;

/** The tree and its uploads under the file system's root (/srv/efs on the lab's origin, /efs on a node). */
export const CMS_TREE = 'cms/wp';
export const CMS_UPLOADS = 'cms/uploads';

/** What the lab boots for the CMS: a node's user data and tags, the web server's, and the options of the mounts made by hand. */
export interface CmsUserData {
  /** The cache node: NFSv3 and NFSv4.1 to clients, a mirror of the WordPress tree. */
  readonly node: string;
  readonly nodeTags: Record<string, string>;
  /** The web server: the library's client user data of that fleet (the re-export over NFSv3 with fsc, and the mirror). */
  readonly web: string;
  readonly fleetName: string;
  /** The mount options an FS-Cache client of the origin renders (with fsc). */
  readonly fscOptions: string;
  /** The mount options a client of a fleet of the default protocol renders (NFSv4.1). */
  readonly v41Options: string;
}

/** Where the web server's client mounts the mirror of the tree, which its user data warms (`warming.paths`). */
export const CMS_WARM_PATH = `/mnt/mirror/${CMS_TREE}`;

/**
 * The CMS's stacks: a fleet of one node that serves NFSv3 and NFSv4.1 and mirrors the WordPress tree, its attribute
 * and directory timers and the mirror's interval `cacheSeconds`; a client of it (the web server); an FS-Cache client of
 * the origin and a client of a fleet of the default protocol, for their mount options. With `nconnect`, the web server
 * mounts the re-export and the mirror over that many TCP connections each (`FleetSourceOptions.nconnect`).
 */
export function cmsUserData(o: { cacheSeconds: number; mirrorMiB: number; nconnect?: number }): CmsUserData {
  const app = newApp();
  const stack = new Stack(app, 'Cms');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const fleetProps = {
    vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(150), tuning: { nfsdThreads: 16 },
    attributeCacheTimeout: Duration.seconds(o.cacheSeconds), directoryCacheTimeout: Duration.seconds(o.cacheSeconds),
  };
  const fleet = new CacheFleet(stack, 'Fleet', {
    ...fleetProps, clientNfsVersion: NfsVersion.NFS_V3,
    mirrors: [Mirror.path(`/efs/${CMS_TREE}`)],
    mirroring: { interval: Duration.seconds(o.cacheSeconds), size: Size.mebibytes(o.mirrorMiB), syncTimeout: Duration.minutes(20) },
  });
  const web = new FsCacheClientLaunchTemplate(stack, 'Web', {
    vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: [`/efs/${CMS_TREE}`], nconnect: o.nconnect }),
    // The web server boots beside its node, whose first boot (and first sync of the tree) under emulation takes minutes.
    diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }), mountTimeout: Duration.seconds(900),
    // A web server that starts warm: the tree it serves read through the mirror before it counts as ready.
    warming: { paths: [CMS_WARM_PATH], timeout: Duration.minutes(10) },
  });
  const originClient = new FsCacheClientLaunchTemplate(stack, 'OriginClient', {
    vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS,
    diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }),
  });
  const stack41 = new Stack(app, 'Cms41');
  const vpc41 = new ec2.Vpc(stack41, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const origin41 = CacheOrigin.efs(importedFs(stack41), { mountHelper: MountHelper.NFS });
  const fleet41 = new CacheFleet(stack41, 'Fleet', { ...fleetProps, vpc: vpc41, origin: origin41 });
  const client41 = new FsCacheClientLaunchTemplate(stack41, 'Client', { vpc: vpc41, source: MountSource.cacheFleet(fleet41) });
  const ud = (st: Stack, lt: ec2.LaunchTemplate) => resolveUserData(Template.fromStack(st).toJSON() as CfnTemplate,
    st.getLogicalId(lt.node.defaultChild as ec2.CfnLaunchTemplate), PSEUDO_VALUES);
  return {
    node: ud(stack, fleet.launchTemplate),
    nodeTags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource) },
    web: ud(stack, web.launchTemplate),
    fleetName: fleet.endpoint,
    fscOptions: parameters(ud(stack, originClient.launchTemplate)).EFSC_MOUNT_OPTIONS,
    v41Options: parameters(ud(stack41, client41.launchTemplate)).EFSC_MOUNT_OPTIONS,
  };
}

/**
 * Shell for the node: the mirror's timer held, and a sync it had started finished (a oneshot unit is "activating"
 * while it runs), so that what the origin serves next is the requests' work alone.
 */
export const HOLD_MIRROR = 'systemctl stop efs-cache-mirror.timer; for i in $(seq 1 600); do ' +
  '[ "$(systemctl show -p ActiveState --value efs-cache-mirror.service)" = activating ] || exit 0; sleep 1; done; ' +
  'echo "a sync of the mirror still running after 600 s" >&2; exit 1';

/** Where the packages are written on a guest. */
const DEB_DIR = '/var/tmp/cms-debs';

/** The CMS packages (downloaded once into the lab's cache), written to `vm`; returns WordPress's Debian version. */
export async function copyCmsPackages(vm: Vm): Promise<string> {
  const debs = debianPackages('wordpress', CMS_PACKAGES);
  await vm.execOk(`mkdir -p ${DEB_DIR}`);
  for (const d of debs) await vm.writeFile(`${DEB_DIR}/${d.name}.deb`, fs.readFileSync(d.file));
  return debs[0].version;
}

/** One file of media: the upload path under the uploads directory, as posts link to it. */
export function mediaPath(i: number): string {
  return `2026/11/media-${i}.jpg`;
}

/**
 * Shell that makes the site's files from the packages copyCmsPackages wrote: the WordPress tree at `dir` (with a
 * wp-config.php of its own: the database on each web server's localhost, the site's URL fixed, WP-Cron off), and
 * `media` files of 40-160 KB in `uploads`. Run where the files live (the origin); idempotent.
 */
export function cmsTree(dir: string, uploads: string, media: number): string {
  const config = `<?php
// The lab's CMS: every web server has its own database on localhost (fixed keys: a lab, not a secret).
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', 'lab');
define('DB_HOST', 'localhost');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_HOME', 'http://${CMS_HOST}');
define('WP_SITEURL', 'http://${CMS_HOST}');
foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as $k) {
    define($k, 'lab-' . $k);
}
// Scheduled work runs from the system's timer on a real site, not inside page views (and no update checks here).
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
$table_prefix = 'wp_';
if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
`;
  return [
    'set -euo pipefail',
    `rm -rf /var/tmp/cmsx && mkdir -p /var/tmp/cmsx`,
    `for d in ${DEB_DIR}/*.deb; do dpkg-deb -x "$d" /var/tmp/cmsx; done`,
    // Links out of the tree that no web server has: Apache's .htaccess and Debian's CA bundle (a file the tree keeps).
    'rm -f /var/tmp/cmsx/usr/share/wordpress/.htaccess',
    'cp --remove-destination /etc/ssl/certs/ca-certificates.crt /var/tmp/cmsx/usr/share/wordpress/wp-includes/certificates/ca-bundle.crt',
    `rm -rf '${dir}' && mkdir -p '${dir}' '${uploads}/2026/11'`,
    // -L: every other link points into the packages unpacked beside it; the copy holds their files, as upstream's does.
    `cp -RL /var/tmp/cmsx/usr/share/wordpress/. '${dir}/'`,
    `cat > '${dir}/wp-config.php' <<'EOF'\n${config}EOF`,
    `for i in $(seq 1 ${media}); do head -c $((40000 + (i * 7919) % 120000)) /dev/urandom > "${uploads}/$(printf '2026/11/media-%d.jpg' "$i")"; done`,
    `rm -rf /var/tmp/cmsx`,
    `chmod -R a+rX '${dir}' '${uploads}'`,
    'sync',
    `find '${dir}' -type l | wc -l | grep -qx 0`,
    `echo "cms tree: $(find '${dir}' -type f | wc -l) files, $(find '${dir}' -name '*.php' | wc -l) PHP, $(du -sm '${dir}' | cut -f1) MiB; $(ls '${uploads}/2026/11' | wc -l) media"`,
  ].join('\n');
}

/** One site on the web server: nginx on `port` serving the tree at `root`, its uploads from `uploads`. */
export interface CmsSite {
  readonly port: number;
  readonly root: string;
  readonly uploads: string;
}

/** The PHP settings a run uses: Debian's php8.2-fpm as packaged, or what an operator of a site on EFS sets. */
export type PhpProfile = 'debian' | 'tuned';

/**
 * PHP settings per profile, written to PHP-FPM's conf.d. `debian`: nothing changed (OPcache on, timestamps validated
 * every 2 s, a 4 MiB realpath cache kept 120 s). `tuned`: OPcache never revalidates a script's timestamp (a deploy
 * resets it), and resolved paths are kept 10 minutes (the PHP manual's opcache.validate_timestamps and realpath_cache_ttl).
 */
export const PHP_PROFILES: Record<PhpProfile, Record<string, string>> = {
  debian: {},
  tuned: { 'opcache.validate_timestamps': '0', 'realpath_cache_ttl': '600', 'realpath_cache_size': '4096K' },
};

/** Shell that checks PHP-FPM runs: its master process and its socket, never the unit's status alone. */
const FPM_UP = 'for i in $(seq 1 60); do pgrep -f "php-fpm: master" >/dev/null && [ -S /run/php/php8.2-fpm.sock ] && exit 0; sleep 1; done; ' +
  'systemctl --no-pager status php8.2-fpm >&2; exit 1';

/** Shell that applies a PHP profile and restarts PHP-FPM (its OPcache and realpath cache start empty). */
export function phpProfile(p: PhpProfile): string {
  const ini = Object.entries(PHP_PROFILES[p]).map(([k, v]) => `${k}=${v}`).join('\n');
  return `printf '%s\\n' '; the lab CMS profile: ${p}' ${ini ? `'${ini.replace(/\n/g, "' '")}'` : ''} > /etc/php/8.2/fpm/conf.d/99-cms.ini && ` +
    `systemctl restart php8.2-fpm && (${FPM_UP})`;
}

/**
 * Shell that makes a web server of a VM: a local MariaDB with the site's database and user, one nginx server per
 * site, PHP-FPM (Debian's settings) and nginx started, each checked by its process and socket.
 */
export function webServer(sites: readonly CmsSite[]): string {
  const server = (s: CmsSite) => `server {
    listen ${s.port};
    server_name _;
    root ${s.root};
    index index.php;
    location ^~ /wp-content/uploads/ { alias ${s.uploads}/; }
    location / { try_files $uri $uri/ /index.php?$args; }
    location ~ \\.php$ {
        include snippets/fastcgi-php.conf;
        fastcgi_pass unix:/run/php/php8.2-fpm.sock;
    }
}
`;
  return [
    'set -euo pipefail',
    'systemctl start mariadb',
    'for i in $(seq 1 60); do mysqladmin ping >/dev/null 2>&1 && break; sleep 1; done; mysqladmin ping >/dev/null',
    'mysql -e "CREATE DATABASE IF NOT EXISTS wordpress; CREATE USER IF NOT EXISTS \'wordpress\'@\'localhost\' IDENTIFIED BY \'lab\'; ' +
    'GRANT ALL ON wordpress.* TO \'wordpress\'@\'localhost\'; FLUSH PRIVILEGES"',
    'rm -f /etc/nginx/sites-enabled/default',
    `cat > /etc/nginx/sites-enabled/cms <<'EOF'\n${sites.map(server).join('')}EOF`,
    'nginx -t 2>&1',
    phpProfile('debian'),
    'systemctl restart nginx',
    `for i in $(seq 1 30); do pgrep -x nginx >/dev/null && ss -ltn | grep -q ':${sites[0].port} ' && exit 0; sleep 1; done; systemctl --no-pager status nginx >&2; exit 1`,
  ].join('\n');
}

/**
 * The site's content, installed into the web server's own database by PHP's CLI from the tree at `root`: WordPress
 * installed, then `posts` posts (three paragraphs and an image each, fixed dates) linking the media files in turn.
 */
const INSTALLER = `<?php
[, $root, $posts, $media] = $argv;
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = '${CMS_HOST}';
$_SERVER['SERVER_NAME'] = '${CMS_HOST}';
$_SERVER['REQUEST_URI'] = '/';
require $root . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (!is_blog_installed()) {
    wp_install('Lab CMS', 'admin', 'admin@example.invalid', false, '', 'lab-admin-password');
}
update_option('permalink_structure', '');
$have = (int) wp_count_posts('post')->publish;
for ($i = $have; $i <= (int) $posts; $i++) {
    $m = ($i - 1) % (int) $media + 1;
    $p = '';
    for ($k = 1; $k <= 3; $k++) {
        $p .= "<!-- wp:paragraph -->\\n<p>Paragraph $k of post $i: " . str_repeat("lorem ipsum dolor sit amet $i ", 12) . "</p>\\n<!-- /wp:paragraph -->\\n";
    }
    $img = "<!-- wp:image -->\\n<figure class=\\"wp-block-image\\"><img src=\\"http://${CMS_HOST}/wp-content/uploads/2026/11/media-$m.jpg\\" alt=\\"media $m\\"/></figure>\\n<!-- /wp:image -->\\n";
    $id = wp_insert_post([
        'post_title' => "Post $i", 'post_content' => $p . $img, 'post_status' => 'publish', 'post_author' => 1,
        'post_date' => sprintf('2026-%02d-%02d %02d:00:00', 1 + intdiv($i, 28) % 12, 1 + $i % 28, $i % 24),
    ], true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\\n"); exit(1); }
}
echo 'posts: ' . wp_count_posts('post')->publish . "\\n";
`;

/** Shell that installs the site's content from the tree at `root` (idempotent: posts already there are kept). */
export function installCms(root: string, posts: number, media: number): string {
  return `cat > /root/cms-install.php <<'EOF'\n${INSTALLER}EOF\nphp /root/cms-install.php '${root}' ${posts} ${media}`;
}

/** The pages a run requests: the front page, one post, one media file. */
export const CMS_PAGES = { front: '/', post: '/?p=100', media: `/wp-content/uploads/${mediaPath(7)}` } as const;
export type CmsPage = keyof typeof CMS_PAGES;

/** Shell (on the load client) that fetches a page of the site on `server:port` to stdout, failing on any status but 200. */
export function fetchPage(server: string, port: number, page: string): string {
  return `curl -sS --fail --max-time 300 -H 'Host: ${CMS_HOST}' 'http://${server}:${port}${page}'`;
}
