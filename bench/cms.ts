/**
 * Item 10: a real CMS through each mode, on the lab's VMs, in one run. WordPress as Debian packs it, made whole, with
 * a few hundred posts and media files (test/heavy/lab/scenarios/cms.ts), on an origin that behaves like EFS (kernel
 * nfsd, NFSv4.1 only, no delegations, shaped link); one cache node of a fleet that serves NFSv3 and NFSv4.1, with a
 * mirror of the WordPress tree; one web server (nginx, PHP-FPM, MariaDB on its own disk) that runs the library's
 * client user data of that fleet (the re-export over NFSv3 with fsc, and the mirror) and mounts the rest by hand
 * with the options the library's templates render: the origin directly (EFS's recommended options, no fsc), the
 * origin with the FS-Cache client's options, the node over NFSv4.1 with a v4.1 fleet's client options; and a copy of
 * the tree on its own disk (the ceiling). One nginx server per mode, one port each. A load client (wrk, and
 * bench/cms_load.py) requests the pages.
 *
 * Measured per mode: the steady state (wrk at a fixed concurrency, after a warm-up) of the front page, a post and a
 * media file, with Debian's PHP settings and with an EFS operator's; a web server that comes up cold (PHP-FPM
 * restarted, the web server's page, dentry and inode caches dropped: its first requests), in `coldRuns` runs, and
 * through the mirror once more per run with the client's warming first (the web server's user data warms the mirror
 * at boot; `client.sh --warm` runs the same warming again: its seconds and origin operations are recorded); a publish
 * (the whole tree rewritten on the origin with a new version: seconds until the mode serves it). Around every
 * measurement the origin's own nfsd counters are read. `cases` narrows a run to some of the three.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Lab, progress } from '../test/heavy/lab/harness';
import {
  CMS_HOST, CMS_PAGES, CMS_TREE, CMS_UPLOADS, CMS_WARM_PATH, CmsPage, CmsSite, cmsTree, cmsUserData, copyCmsPackages, HOLD_MIRROR, installCms,
  PHP_PROFILES, PhpProfile, phpProfile, webServer,
} from '../test/heavy/lab/scenarios/cms';
import { EFS_NAME } from '../test/heavy/lab/scenarios/stacks';
import { bootOrigin, counters, Counters, expectDone, originSetting } from './metadata';
import { CmsCell, CmsMode, CmsResults, CmsWarming, labPartRun } from './results';
import { parseWrk, WrkRun } from './wrk';

export interface CmsSettings {
  readonly delayMs: number;
  readonly rateMbit: number;
  /** Posts and media files of the site. */
  readonly posts: number;
  readonly media: number;
  /**
   * Repeats of each steady measurement, and the seconds of each (wrk -d): of a page PHP renders (about a second each on
   * the emulated CPU, so a run counts whole requests: 8 s made ratios of 3 against 6), and of a media file (nginx's).
   */
  readonly repeats: number;
  readonly seconds: number;
  readonly mediaSeconds: number;
  /** wrk's connections (the fixed concurrency). */
  readonly connections: number;
  /** Requests of a cold web server measured. */
  readonly coldRequests: number;
  /** Runs of the cold case (every mode, and the warmed mirror, once per run). */
  readonly coldRuns: number;
  /** The cases measured: the steady state, a cold web server, a publish. */
  readonly cases: CmsCase[];
  /** The fleet's attribute and directory cache timers, and the mirror's sync interval, seconds. */
  readonly cacheSeconds: number;
  /** How long a publish is waited for, seconds. */
  readonly publishLimit: number;
}

export type CmsCase = 'steady' | 'cold' | 'publish';
export const CMS_CASES: CmsCase[] = ['steady', 'cold', 'publish'];

export const DEFAULT_CMS_SETTINGS: CmsSettings = {
  delayMs: 2, rateMbit: 16, posts: 300, media: 100, repeats: 3, seconds: 16, mediaSeconds: 8, connections: 1, coldRequests: 100, coldRuns: 2,
  cases: CMS_CASES, cacheSeconds: 60, publishLimit: 150,
};

/**
 * The results of a run narrowed to some cases, with the cells of the other cases kept from the run before (its date
 * named in the settings, so that no figure passes for this run's): a narrowed run replaces only what it measured.
 */
export function mergeCmsResults(next: CmsResults, prev: CmsResults | undefined, cases: CmsCase[]): CmsResults {
  const kept = CMS_CASES.filter((c) => !cases.includes(c));
  if (!prev || kept.length === 0) return next;
  const cells = prev.cells.filter((c) => kept.includes(c.kind));
  if (cells.length === 0) return next;
  return {
    ...next,
    cells: [...cells, ...next.cells],
    settings: { ...next.settings, 'kept from an earlier run': `${kept.join(', ')}: measured on ${prev.date}, not in this run` },
    failures: [...prev.failures.filter((f) => kept.some((k) => f.startsWith(k))), ...next.failures],
  };
}

/** The figures of a warming's log line (`warmed <paths>: N files, M MiB in Ss`), or undefined. */
export function parseWarmLine(text: string): { files: number; mib: number; seconds: number } | undefined {
  const m = /warmed \S+(?: \S+)*: (\d+) files, (\d+) MiB in (\d+)s/.exec(text);
  return m ? { files: Number(m[1]), mib: Number(m[2]), seconds: Number(m[3]) } : undefined;
}

const MIN = 60_000;
/** Requests of each page before its steady measurement (after a restart PHP compiles the front page's scripts first). */
const WARM_UP_REQUESTS = 2;
/** The pages measured with the tuned PHP settings (a media file is nginx's alone; the post renders as the front page does). */
const TUNED_PAGES: CmsPage[] = ['front'];
const SUBNET = '10.77.0';
const NODE_IP = `${SUBNET}.31`;
const WEB_IP = `${SUBNET}.41`;
const EFS_OPTIONS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';
const TREE = CMS_TREE;
const UPLOADS = CMS_UPLOADS;
const DROP = 'sync && echo 3 > /proc/sys/vm/drop_caches';
/** The NFSv4 operations the node's mirror nfsd (its own network namespace) served, SEQUENCE (field 56 of proc4ops) aside. */
const MIRROR_OPS = 'ip netns exec efs-cache-mirror awk \'$1 == "proc4ops" { s = 0; for (i = 3; i <= NF; i++) if (i != 56) s += $i; print s }\' /proc/net/rpc/nfsd';
/** The client's warming, as its first boot ran it (the installed bootstrap, `--warm`). */
const WARM = '/usr/local/lib/efs-cache/client.sh --warm';

export const CMS_MODES: Record<CmsMode, string> = {
  local: 'the web server\'s own disk (the ceiling)',
  direct: 'origin, directly (EFS options, no fsc)',
  fscache: 'FS-Cache client of the origin',
  v41: 'node\'s re-export over NFSv4.1',
  v3: 'node\'s re-export over NFSv3',
  mirror: 'node\'s mirror (uploads through the re-export)',
};

/** Each mode's nginx port and where its tree and uploads are on the web server. */
const SITES: Record<CmsMode, CmsSite> = {
  local: { port: 8081, root: `/srv/local/${TREE}`, uploads: `/srv/local/${UPLOADS}` },
  direct: { port: 8082, root: `/mnt/direct/${TREE}`, uploads: `/mnt/direct/${UPLOADS}` },
  fscache: { port: 8083, root: `/mnt/fsc/${TREE}`, uploads: `/mnt/fsc/${UPLOADS}` },
  v41: { port: 8084, root: `/mnt/v41/${TREE}`, uploads: `/mnt/v41/${UPLOADS}` },
  v3: { port: 8085, root: `/mnt/efs/${TREE}`, uploads: `/mnt/efs/${UPLOADS}` },
  mirror: { port: 8086, root: `/mnt/mirror/${TREE}`, uploads: `/mnt/efs/${UPLOADS}` },
};

export async function runCms(s: CmsSettings, log: (m: string) => void): Promise<CmsResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = cmsUserData({ cacheSeconds: s.cacheSeconds, mirrorMiB: 256 });
  const lab = await Lab.create({ name: 'bench-cms' });
  const failures: string[] = [];
  const cells: CmsCell[] = [];
  const notes: Record<string, string> = {};
  try {
    const origin = await bootOrigin(lab, 1536);
    const version = await copyCmsPackages(origin);
    log(`10. origin: ${(await origin.execOk(cmsTree(`/srv/efs/${TREE}`, `/srv/efs/${UPLOADS}`, s.media), { timeoutMs: 20 * MIN })).trim()}`);
    notes.tree = (await origin.execOk(`echo "$(find /srv/efs/${TREE} -type f | wc -l) files, $(find /srv/efs/${TREE} -name '*.php' | wc -l) PHP"`)).trim();
    const node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.node, cpus: 1, memoryMiB: 1536, instance: { tags: ud.nodeTags } });
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 40 * MIN }));
    await node.execOk(HOLD_MIRROR, { timeoutMs: 10 * MIN });
    await lab.setDnsRecord(ud.fleetName, [NODE_IP]);
    const nvme = Array.from({ length: 2 }, (_, i) => ({ sizeMiB: 384, serial: `cms-web-${i}`, blank: true }));
    const web = await lab.startVm({ name: 'web', ip: WEB_IP, userData: ud.web, cpus: 1, memoryMiB: 1536, nvmeDisks: nvme });
    const load = await lab.startVm({ name: 'load', ip: `${SUBNET}.51`, userData: '#!/bin/bash\ntrue\n', cpus: 1, memoryMiB: 1024 });
    expectDone('web', await web.waitForCloudInit({ timeoutMs: 30 * MIN }));
    // The warming of its first boot (the origin's link unshaped then, the node's first sync done).
    notes.bootWarming = (await web.execOk('journalctl -b -t efs-cache -o cat | grep -E "^(warmed|WARN: warm)" || true')).trim();
    log(`10. the web server's first boot: ${notes.bootWarming}`);
    expectDone('load', await load.waitForCloudInit({ timeoutMs: 20 * MIN }));
    await web.execOk([
      'mkdir -p /mnt/direct /mnt/fsc /mnt/v41 /srv/local/cms',
      `mount -t nfs4 -o ${EFS_OPTIONS},nosharecache ${EFS_NAME}:/ /mnt/direct`,
      `mount -t nfs4 -o ${ud.fscOptions} ${EFS_NAME}:/ /mnt/fsc`,
      `mount -t nfs4 -o ${ud.v41Options} ${NODE_IP}:/efs /mnt/v41`,
      `cp -a /mnt/direct/cms/. /srv/local/cms/`,
    ].join(' && '), { timeoutMs: 20 * MIN });
    notes.mounts = (await web.execOk('findmnt -t nfs,nfs4 -rno TARGET,SOURCE,OPTIONS')).trim();
    log(`10. web server mounts:\n${notes.mounts}`);
    log(`10. ${(await web.execOk(webServer(Object.values(SITES)), { timeoutMs: 10 * MIN })).trim().split('\n').slice(-1)[0] ?? ''}`);
    log(`10. ${(await web.execOk(installCms(SITES.local.root, s.posts, s.media), { timeoutMs: 60 * MIN })).trim()}`);
    await load.writeFile('/root/cms_load.py', fs.readFileSync(path.join(__dirname, 'cms_load.py'), 'utf8'));
    // The set-up (the node's first sync, the web server's copy of the tree) ran unshaped; what is measured does not.
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });
    // Every mode serves the same bytes (the CI proof is cms.lab.ts's; here a mode that differs is a failure).
    const digest = async (m: CmsMode, page: string) =>
      (await load.execOk(`curl -sS --fail --max-time 300 -H 'Host: ${CMS_HOST}' 'http://${WEB_IP}:${SITES[m].port}${page}' | sha256sum`)).trim();
    for (const [page, p] of Object.entries(CMS_PAGES)) {
      const want = await digest('local', p);
      for (const m of Object.keys(CMS_MODES) as CmsMode[]) {
        if ((await digest(m, p)) !== want) failures.push(`${m}: the ${page} page differs from the local disk's`);
      }
    }

    const ops = async () => counters(origin);
    // The origin's operations other than SEQUENCE (every request's first; an idle mount's lease upkeep is it alone).
    const work = (c: Counters) => c.ops.total - c.ops.SEQUENCE;
    const per = (a: Counters, b: Counters, n: number) => ({ ops: (work(a) - work(b)) / n, rpcs: (a.rpcs - b.rpcs) / n });
    // wrk keeps a latency histogram of its timeout in microseconds (8 bytes each): 20 s is 160 MB of the load client's memory.
    const wrk = (m: CmsMode, page: string, seconds: number) =>
      `wrk -t1 -c${s.connections} -d${seconds}s --timeout 20s --latency -H 'Host: ${CMS_HOST}' 'http://${WEB_IP}:${SITES[m].port}${page}'`;

    // 1. The steady state, per PHP profile: a warm-up of every page, then the repeats.
    for (const profile of s.cases.includes('steady') ? Object.keys(PHP_PROFILES) as PhpProfile[] : []) {
      await web.execOk(phpProfile(profile), { timeoutMs: 5 * MIN });
      for (const mode of Object.keys(CMS_MODES) as CmsMode[]) {
        for (const [page, p] of Object.entries(CMS_PAGES) as [CmsPage, string][]) {
          if (profile !== 'debian' && !TUNED_PAGES.includes(page)) continue;
          try {
            await load.execOk(`for i in $(seq 1 ${WARM_UP_REQUESTS}); do curl -sS --fail --max-time 300 -o /dev/null -H 'Host: ${CMS_HOST}' ` +
              `'http://${WEB_IP}:${SITES[mode].port}${p}' || exit 1; done`, { timeoutMs: 15 * MIN });
            const runs: WrkRun[] = [];
            const originOps: number[] = [];
            for (let r = 0; r < s.repeats; r++) {
              const o0 = await ops();
              const w = parseWrk(await load.execOk(wrk(mode, p, page === 'media' ? s.mediaSeconds : s.seconds), { timeoutMs: 10 * MIN }));
              if (!(w.requests > 0) || w.errors) throw new Error(`wrk: ${w.requests} requests, ${w.errors} errors (non-2xx or socket)`);
              const d = per(await ops(), o0, Math.max(1, w.requests));
              runs.push(w);
              originOps.push(d.ops);
            }
            cells.push({ kind: 'steady', mode, page, profile, runs, originOpsPerRequest: originOps });
            log(`10. steady ${profile} ${mode} ${page}: ${runs.map((w) => w.rps.toFixed(2)).join(', ')} req/s, ` +
              `p50 ${runs.map((w) => (w.p50 * 1000).toFixed(0)).join(', ')} ms, origin ops/request ${originOps.map((v) => v.toFixed(1)).join(', ')}`);
          } catch (e) {
            failures.push(`steady ${profile} ${mode} ${page}: ${(e as Error).message.split('\n')[0]}`);
            log(`10. steady ${profile} ${mode} ${page}: FAILED ${(e as Error).message}`);
          }
        }
      }
    }
    await web.execOk(phpProfile('debian'), { timeoutMs: 5 * MIN });

    // 2. A web server that comes up cold, Debian's PHP settings: PHP-FPM restarted, the kernel's caches dropped; each mode
    // once per run, and the mirror once more with the client's warming between the drop and the first request.
    const coldPaths = Object.values(CMS_PAGES).map((p) => `'${p}'`).join(' ');
    const coldModes: [CmsMode, boolean][] = [...(Object.keys(CMS_MODES) as CmsMode[]).map((m): [CmsMode, boolean] => [m, false]), ['mirror', true]];
    for (let run = 0; run < (s.cases.includes('cold') ? s.coldRuns : 0); run++) {
      for (const [mode, warmed] of coldModes) {
        const name = `cold ${mode}${warmed ? ' warmed' : ''} (run ${run + 1})`;
        try {
          await web.execOk(`${phpProfile('debian')} && ${DROP}`, { timeoutMs: 5 * MIN });
          let warming: CmsWarming | undefined;
          if (warmed) {
            const [w0, m0] = [await ops(), Number((await node.execOk(MIRROR_OPS)).trim())];
            const t0 = Date.now();
            const out = await web.execOk(`${WARM} 2>&1`, { timeoutMs: 20 * MIN });
            const seconds = (Date.now() - t0) / 1000;
            const [w1, m1] = [await ops(), Number((await node.execOk(MIRROR_OPS)).trim())];
            const line = parseWarmLine(out);
            if (!line || /WARN/.test(out)) throw new Error(`the warming did not finish within its bounds: ${out.trim().split('\n').slice(-2).join(' ')}`);
            warming = { seconds, files: line.files, mib: line.mib, originOps: work(w1) - work(w0), mirrorOps: m1 - m0 };
            log(`10. ${name}: warming read ${line.files} files (${line.mib} MiB) in ${seconds.toFixed(1)} s; origin ops ${warming.originOps}, mirror ops ${warming.mirrorOps}`);
          }
          const o0 = await ops();
          const r = JSON.parse(await load.execOk(`python3 /root/cms_load.py first ${WEB_IP} ${CMS_HOST} ${SITES[mode].port} ${s.coldRequests} ${coldPaths}`,
            { timeoutMs: 60 * MIN })) as { requests: { seconds: number; status: number }[] };
          const d = per(await ops(), o0, r.requests.length);
          const bad = r.requests.filter((q) => q.status !== 200).length;
          if (bad) failures.push(`${name}: ${bad} requests were not answered 200`);
          cells.push({
            kind: 'cold', mode, page: 'mix', profile: 'debian', seconds: r.requests.map((q) => q.seconds), originOpsPerRequest: [d.ops], run,
            ...(warming ? { warming } : {}),
          });
          log(`10. ${name}: first ${r.requests[0].seconds.toFixed(2)} s, total ${r.requests.reduce((a, q) => a + q.seconds, 0).toFixed(1)} s, origin ops/request ${d.ops.toFixed(1)}`);
        } catch (e) {
          failures.push(`${name}: ${(e as Error).message.split('\n')[0]}`);
          log(`10. ${name}: FAILED ${(e as Error).message}`);
        }
      }
    }

    // 3. A publish, one mode at a time (each its own new version, so each window's origin operations are its own):
    // the whole tree rewritten (every file, with wp_version changed), then the front page polled until it names it.
    // The mirror's timer runs only in the mirror's window; the local disk's copy is rewritten by the web server itself.
    for (const [i, mode] of (s.cases.includes('publish') ? Object.keys(CMS_MODES) as CmsMode[] : []).entries()) {
      const marker = `6.1.9-publish-${i + 1}`;
      // A new release: every file's content written again and its mtime new, as an upgrade or a theme deploy leaves them.
      const rewrite = (dir: string) => `rm -rf ${dir}.next && cp -a ${dir} ${dir}.next && find ${dir}.next -type f -exec touch {} + && ` +
        `sed -i "s/^\\$wp_version = .*/\\$wp_version = '${marker}';/" ${dir}.next/wp-includes/version.php && ` +
        `grep -q "${marker}" ${dir}.next/wp-includes/version.php && cp -a ${dir}.next/. ${dir}/ && rm -rf ${dir}.next && sync`;
      try {
        const o0 = await ops();
        const t0 = Date.now();
        await (mode === 'local' ? web : origin).execOk(rewrite(mode === 'local' ? SITES.local.root : `/srv/efs/${TREE}`), { timeoutMs: 20 * MIN });
        const copySeconds = (Date.now() - t0) / 1000;
        if (mode === 'mirror') await node.execOk('systemctl start efs-cache-mirror.timer');
        const r = JSON.parse(await load.execOk(
          `python3 /root/cms_load.py publish ${WEB_IP} ${CMS_HOST} ${s.publishLimit} '${marker}' ${SITES[mode].port}`,
          { timeoutMs: (s.publishLimit + 600) * 1000 })) as { seconds: Record<string, number | null>; requests: number };
        if (mode === 'mirror') await node.execOk(HOLD_MIRROR, { timeoutMs: 10 * MIN });
        const o = await ops();
        const served = r.seconds[String(SITES[mode].port)];
        if (served === null) failures.push(`publish ${mode}: not served within ${s.publishLimit} s`);
        cells.push({
          kind: 'publish', mode, page: 'front', profile: 'debian', seconds: served === null ? [] : [served],
          originOpsPerRequest: [work(o) - work(o0)], copySeconds, requests: r.requests,
        });
        log(`10. publish ${mode}: served after ${served ?? `more than ${s.publishLimit}`} s (rewrite ${copySeconds.toFixed(1)} s), ` +
          `origin ops ${work(o) - work(o0)}`);
      } catch (e) {
        failures.push(`publish ${mode}: ${(e as Error).message.split('\n')[0]}`);
        log(`10. publish ${mode}: FAILED ${(e as Error).message}`);
      }
    }
    notes.php = (await web.execOk('php-fpm8.2 -i 2>/dev/null | grep -E "^(opcache.enable|opcache.validate_timestamps|opcache.revalidate_freq|realpath_cache_size|realpath_cache_ttl) " || true')).trim();

    return {
      ...labPartRun(date, started, originSetting(s), {
        'VMs': 'QEMU with TCG (software emulation, no KVM), 1 vCPU each: origin 1536 MiB, cache node 1536 MiB, web server 1536 MiB with ' +
          '2 x 384 MiB emulated NVMe in RAID 0 (its FS-Cache), load client 1024 MiB',
        'site': `Debian's wordpress ${version} with twentytwentythree, made whole (${notes.tree}), ${s.posts} posts, ${s.media} media files of 40-160 KB; ` +
          'nginx, PHP-FPM 8.2 and MariaDB from Debian 12 on the web server, its database on its own disk',
        'modes': Object.entries(CMS_MODES).map(([k, v]) => `${k}: ${v}`).join('; '),
        'web server mounts': notes.mounts.replace(/\n/g, '; '),
        'fleet': `one node, NFSv3 and NFSv4.1 to clients, attribute and directory timers ${s.cacheSeconds} s, a mirror of /efs/${TREE} synced every ${s.cacheSeconds} s`,
        'steady': `wrk, ${s.connections} connection(s), ${s.repeats} runs of ${s.seconds} s per page (a media file ${s.mediaSeconds} s) after ${WARM_UP_REQUESTS} requests of it; ` +
          `with the tuned PHP settings the ${TUNED_PAGES.join(', ')} page only; the mirror's timer held; the origin's link shaped after the set-up`,
        'cold': `PHP-FPM restarted and the web server's page, dentry and inode caches dropped (its FS-Cache disk and MariaDB kept), then ${s.coldRequests} ` +
          `requests one after another, the pages in turn; ${s.coldRuns} runs, each mode once per run; the mirror once more per run with the client's ` +
          `warming of ${CMS_WARM_PATH} (its user data's, run again with client.sh --warm) between the drop and the first request`,
        'warming at boot': notes.bootWarming || 'no line',
        'publish': `the tree rewritten on the origin (every file, with a new mtime, wp_version changed), then the front page polled until it names the new version (at most ${s.publishLimit} s); ` +
          'the local disk: the web server rewrites its own copy the same way',
        'PHP profiles': Object.entries(PHP_PROFILES).map(([k, v]) => `${k}: ${Object.entries(v).map(([a, b]) => `${a}=${b}`).join(', ') || 'as packaged'}`).join('; '),
        'PHP-FPM as run': notes.php.replace(/\n/g, '; '),
        'cases': s.cases.join(', '),
      }),
      cells,
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-cms lab destroyed');
  }
}
