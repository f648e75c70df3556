/**
 * A real CMS through the cache tier, on a real kernel: WordPress as Debian packs it, made whole, on an origin that
 * behaves like EFS (no delegations); a cache node that serves it over NFSv3 and NFSv4.1 and serves its tree from a
 * mirror; a web server (nginx, PHP-FPM, its MariaDB on its own disk) that runs the library's client user data of that
 * fleet (the re-export over NFSv3 with fsc, and the mirror, each over NCONNECT TCP connections: `nconnect`) and mounts
 * the origin directly and the node over NFSv4.1 by hand, with the options the library renders. One nginx server per way to the files (test/heavy/lab/scenarios/cms.ts).
 * Asserts bytes and counters, never timings: the speed of each way is the benchmark's (`npm run bench -- --only cms`).
 */
import { Lab, progress, Vm } from './harness';
import {
  CMS_HOST, CMS_TREE, CMS_UPLOADS, CMS_WARM_PATH, CmsSite, cmsTree, cmsUserData, copyCmsPackages, HOLD_MIRROR, installCms, mediaPath, webServer,
} from './scenarios/cms';
import { EFS_NAME, ORIGIN_USER_DATA } from './scenarios/stacks';

const MIN = 60_000;
/** The web server's `nconnect` (`MountSource.cacheFleet(fleet, { nconnect })`): its re-export's and its mirror's TCP connections. */
const NCONNECT = 3;
const NODE_IP = '10.77.0.31';
const EFS_OPTIONS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';
const POSTS = 12;
const MEDIA = 6;
/** Each way to the files, its nginx port and where its tree and uploads are on the web server. */
const SITES = {
  origin: { port: 8082, root: `/mnt/direct/${CMS_TREE}`, uploads: `/mnt/direct/${CMS_UPLOADS}` },
  v41: { port: 8084, root: `/mnt/v41/${CMS_TREE}`, uploads: `/mnt/v41/${CMS_UPLOADS}` },
  v3: { port: 8085, root: `/mnt/efs/${CMS_TREE}`, uploads: `/mnt/efs/${CMS_UPLOADS}` },
  mirror: { port: 8086, root: `/mnt/mirror/${CMS_TREE}`, uploads: `/mnt/efs/${CMS_UPLOADS}` },
} satisfies Record<string, CmsSite>;
type Way = keyof typeof SITES;
const IN_MIRROR_NS = 'ip netns exec efs-cache-mirror';

/**
 * The NFSv4 operations an nfsd has served (`ns`: the mirrors' nfsd of the node), SEQUENCE (operation 53, field 56 of
 * proc4ops) aside: every request's first operation, and all that an idle mount's lease upkeep sends.
 */
async function nfsdOps(vm: Vm, ns = ''): Promise<number> {
  return Number((await vm.execOk(`${ns} awk '$1 == "proc4ops" { s = 0; for (i = 3; i <= NF; i++) if (i != 56) s += $i; print s }' /proc/net/rpc/nfsd`)).trim());
}

describe('lab: a real CMS (WordPress) through the re-export and the mirror', () => {
  let lab: Lab;
  let origin: Vm;
  let node: Vm;
  let web: Vm;
  let pages: Record<string, string>;
  let fleetName: string;
  /** Right after the web server's boot, before any page: its warming's log line, and how much of the mirror's tree is in its page cache. */
  let warmed: { line: string; treeFiles: number; resident: number };

  beforeAll(async () => {
    const t0 = Date.now();
    const ud = cmsUserData({ cacheSeconds: 60, mirrorMiB: 160, nconnect: NCONNECT });
    fleetName = ud.fleetName;
    lab = await Lab.create({ name: 'cms' });
    origin = await lab.startVm({ name: 'origin', ip: '10.77.0.10', userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], cpus: 1 });
    await origin.waitForCloudInit();
    await copyCmsPackages(origin);
    progress(await origin.execOk(cmsTree(`/srv/efs/${CMS_TREE}`, `/srv/efs/${CMS_UPLOADS}`, MEDIA), { timeoutMs: 10 * MIN }));
    node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.node, cpus: 1, memoryMiB: 1536, instance: { tags: ud.nodeTags } });
    await lab.setDnsRecord(ud.fleetName, [NODE_IP]);
    web = await lab.startVm({
      name: 'web', ip: '10.77.0.41', userData: ud.web, cpus: 1, memoryMiB: 1536,
      nvmeDisks: [0, 1].map((i) => ({ sizeMiB: 256, serial: `cms-web-${i}`, blank: true })),
    });
    const [nodeBoot, webBoot] = await Promise.all([node.waitForCloudInit({ timeoutMs: 25 * MIN }), web.waitForCloudInit({ timeoutMs: 25 * MIN })]);
    expect({ node: nodeBoot.status, web: webBoot.status, errors: [...nodeBoot.errors, ...webBoot.errors] })
      .toEqual({ node: 'done', web: 'done', errors: [] });
    await node.execOk(HOLD_MIRROR, { timeoutMs: 11 * MIN });
    // fincore opens each file (no read): the share of the tree's bytes whose pages the boot's warming left in the page cache.
    const resident = await web.execOk(`find ${CMS_WARM_PATH} -type f -print0 | xargs -0 fincore -bno RES,SIZE | ` +
      'awk \'{ r += ($1 < $2 ? $1 : $2); s += $2 } END { printf "%.4f\\n", s ? r / s : 0 }\'', { timeoutMs: 10 * MIN });
    warmed = {
      line: (await web.execOk('journalctl -b -t efs-cache -o cat | grep -E "^warmed |warming" || true')).trim(),
      treeFiles: Number((await origin.execOk(`find /srv/efs/${CMS_TREE} -type f | wc -l`)).trim()),
      resident: Number(resident.trim()),
    };
    await web.execOk([
      'mkdir -p /mnt/direct /mnt/v41',
      `mount -t nfs4 -o ${EFS_OPTIONS},nosharecache ${EFS_NAME}:/ /mnt/direct`,
      `mount -t nfs4 -o ${ud.v41Options} ${NODE_IP}:/efs /mnt/v41`,
    ].join(' && '), { timeoutMs: 5 * MIN });
    progress(await web.execOk(webServer(Object.values(SITES)), { timeoutMs: 10 * MIN }));
    progress(await web.execOk(installCms(SITES.origin.root, POSTS, MEDIA), { timeoutMs: 20 * MIN }));
    const post = (await web.execOk('mysql -N -e "SELECT MAX(ID) FROM wordpress.wp_posts WHERE post_type = \'post\' AND post_status = \'publish\'"')).trim();
    pages = { 'front page': '/', [`post ${post}`]: `/?p=${post}`, 'media file': `/wp-content/uploads/${mediaPath(3)}` };
    progress(`cms lab up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }, 45 * MIN);

  afterAll(async () => {
    await lab?.destroy();
  });

  /** A page of one way to the files, as the web server serves it (Host: the site's name), and its sha256. */
  const fetch = async (way: Way, page: string) => {
    const out = (await web.execOk(`curl -sS --fail --max-time 600 -H 'Host: ${CMS_HOST}' -o /tmp/page 'http://127.0.0.1:${SITES[way].port}${page}' && ` +
      'stat -c %s /tmp/page && sha256sum /tmp/page | cut -d" " -f1 && head -c 1000000 /tmp/page | grep -c "Post " || true',
    { timeoutMs: 11 * MIN })).trim().split('\n');
    return { bytes: Number(out[0]), sha256: out[1], posts: Number(out[2] ?? 0) };
  };

  test('the web server mounts the re-export (NFSv3, fsc) and the mirror from its user data, each over nconnect connections, and each site serves its own mount', async () => {
    const mounts = await web.execOk('findmnt -t nfs,nfs4 -rno TARGET,SOURCE,FSTYPE,OPTIONS');
    progress(mounts);
    // Both by the fleet's name, as the user data mounts them: the re-export over NFSv3 with fsc, the mirror over NFSv4.1.
    const line = (target: string) => mounts.split('\n').find((l) => l.startsWith(`${target} `))?.split(' ') ?? [];
    const [, reexport, reexportType, reexportOptions] = line('/mnt/efs');
    expect([reexport, reexportType]).toEqual([`${fleetName}:/efs`, 'nfs']);
    expect(reexportOptions.split(',')).toEqual(expect.arrayContaining(['ro', 'vers=3', 'fsc', `nconnect=${NCONNECT}`]));
    const [, mirror, mirrorType, mirrorOptions] = line(`/mnt/mirror/${CMS_TREE}`);
    expect([mirror, mirrorType]).toEqual([`${fleetName}:/mirror/${CMS_TREE}`, 'nfs4']);
    expect(mirrorOptions.split(',')).toEqual(expect.arrayContaining(['ro', 'vers=4.1', 'port=2050', `nconnect=${NCONNECT}`]));
    // nconnect as the kernel made it: each mount's RPC client has NCONNECT transports (one `xprt:` line each in
    // mountstats), and requests went out on every one of them (the client takes them in turn): the mirror's from the
    // boot's warming of its tree, the re-export's from reading the files at its tree's top here. Their sends, per transport, count
    // from the mount (a transport idle for minutes closes its connection and keeps its counters).
    await web.execOk(`find /mnt/efs/${CMS_TREE} -maxdepth 1 -type f -exec cat {} + > /dev/null`, { timeoutMs: 5 * MIN });
    const sends = async (target: string) => (await web.execOk(
      `awk -v mp='${target}' '$1 == "device" { on = ($5 == mp) } on && $1 == "xprt:" { print $8 }' /proc/self/mountstats`)).trim().split('\n').map(Number);
    const perTransport = { reexport: await sends('/mnt/efs'), mirror: await sends(`/mnt/mirror/${CMS_TREE}`) };
    progress(`nconnect=${NCONNECT}: requests sent per transport: re-export ${perTransport.reexport.join(', ')}; mirror ${perTransport.mirror.join(', ')}`);
    for (const counts of Object.values(perTransport)) {
      expect(counts).toHaveLength(NCONNECT);
      for (const n of counts) expect(n).toBeGreaterThan(0);
    }
    // The mirror's own nfsd answers the mirror site's opens: a page rendered through it opened the tree's files there.
    const before = await nfsdOps(node, IN_MIRROR_NS);
    await fetch('mirror', '/');
    expect(await nfsdOps(node, IN_MIRROR_NS)).toBeGreaterThan(before + 100);
  });

  test('the web server\'s boot warmed the mirror\'s tree before it counted as ready: every file read, logged, in its page cache', () => {
    progress(`warming: ${warmed.line.replace(/\n/g, '; ')}; ${(warmed.resident * 100).toFixed(1)} % of the tree's bytes in the page cache after boot`);
    // Every file of the tree (as the origin holds it) read, within the bounds: no warning.
    expect(warmed.line).toMatch(new RegExp(`^warmed ${CMS_WARM_PATH}: ${warmed.treeFiles} files, \\d+ MiB in \\d+s$`, 'm'));
    expect(warmed.line).not.toMatch(/WARN/);
    expect(warmed.resident).toBeGreaterThan(0.95);
  });

  test('the front page, a post and a media file through the mirror and the re-export (NFSv3, NFSv4.1) are byte-identical to the origin\'s', async () => {
    for (const [name, page] of Object.entries(pages)) {
      const want = await fetch('origin', page);
      progress(`${name}: ${want.bytes} bytes from the origin directly, sha256 ${want.sha256}`);
      // A real page: WordPress rendered the posts (the front page lists ten, a post names itself); a media file is its bytes.
      expect(want.bytes).toBeGreaterThan(20_000);
      if (name !== 'media file') expect(want.posts).toBeGreaterThan(0);
      for (const way of ['mirror', 'v3', 'v41'] as Way[]) expect({ way, ...(await fetch(way, page)) }).toEqual({ way, ...want });
    }
    // The media file is the origin's file, byte for byte.
    const file = (await origin.execOk(`sha256sum /srv/efs/${CMS_UPLOADS}/${mediaPath(3)} | cut -d" " -f1`)).trim();
    expect((await fetch('mirror', pages['media file'])).sha256).toBe(file);
  });

  test('a warm front page through the mirror costs the origin no operation but lease upkeep; through the re-export its opens reach the origin', async () => {
    await fetch('mirror', '/');
    const o0 = await nfsdOps(origin);
    for (let i = 0; i < 3; i++) await fetch('mirror', '/');
    const mirrorOps = (await nfsdOps(origin)) - o0;
    await fetch('v41', '/');
    const o1 = await nfsdOps(origin);
    for (let i = 0; i < 3; i++) await fetch('v41', '/');
    const reexportOps = (await nfsdOps(origin)) - o1;
    progress(`3 warm front pages: origin operations through the mirror ${mirrorOps}, through the re-export (NFSv4.1) ${reexportOps}`);
    expect(mirrorOps).toBe(0);
    expect(reexportOps).toBeGreaterThan(0);
  });
});
