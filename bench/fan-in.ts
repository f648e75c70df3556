/**
 * Item 8: several clients reading one warm file through one cache node at once (issue 16), on the lab's VMs, in one
 * run. An origin (kernel nfsd, NFSv4.1, no delegations), one cache node running the library's node user data, and
 * `clients` clients that mount the node's re-export without fsc and drop their caches before each pass, so every
 * byte of every pass comes from the node's page cache. The file is read once through the node first (warm). Then
 * `passes` times, alternately: one client alone, and every client at once. The aggregate speed of all clients is
 * compared with one client's, and the node's CPU time is read around each pass (what bounds the aggregate here).
 */
import { CfnResource, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, MountHelper } from '../lib';
import { CfnTemplate, Lab, progress, PSEUDO_VALUES, resolveUserData, Vm } from '../test/heavy/lab/harness';
import { LAB_SUBNET } from '../test/heavy/lab/scenarios/stacks';
import { importedFs, newApp } from '../test/util';
import { bootOrigin, expectDone } from './metadata';
import { FanInResults, machine } from './results';

export interface FanInSettings {
  readonly fileMiB: number;
  readonly clients: number;
  readonly passes: number;
}

export const DEFAULT_FAN_IN_SETTINGS: FanInSettings = { fileMiB: 128, clients: 3, passes: 5 };

const MIN = 60_000;
const SUBNET = '10.77.0';
const NODE_IP = `${SUBNET}.31`;
const DROP = 'sync && echo 3 > /proc/sys/vm/drop_caches';
/** A client of the node as the fleet's clients mount it, less fsc: every read reaches the node. */
const CLIENT_OPTIONS = 'nfsvers=4.1,ro,rsize=1048576,hard,timeo=600,retrans=2,noresvport,nocto';

function nodeUserData(): { userData: string; tags: Record<string, string> } {
  const app = newApp();
  const stack = new Stack(app, 'FanInBench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(150), tuning: { nfsdThreads: 16 }, metrics: false,
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const values = PSEUDO_VALUES;
  return {
    userData: resolveUserData(template, stack.getLogicalId(fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate), values),
    tags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource) },
  };
}

/** The node's CPU time so far (user + nice + system + irq + softirq, in clock ticks) and its total ticks. */
async function cpu(vm: Vm): Promise<{ busy: number; total: number }> {
  const f = (await vm.execOk('head -n 1 /proc/stat')).trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: user + nice + system + irq + softirq, total: user + nice + system + idle + iowait + irq + softirq + (steal ?? 0) };
}

export async function runFanIn(s: FanInSettings, log: (m: string) => void): Promise<FanInResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = nodeUserData();
  const lab = await Lab.create({ name: 'bench-fanin' });
  const failures: string[] = [];
  const single: number[] = [];
  const all: number[] = [];
  const nodeBusySingle: number[] = [];
  const nodeBusyAll: number[] = [];
  try {
    const origin = await bootOrigin(lab, 1024);
    await origin.execOk(`mkdir -p /srv/efs/app && head -c ${s.fileMiB}M /dev/urandom > /srv/efs/app/big.bin && sync`, { timeoutMs: 10 * MIN });
    const node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.userData, cpus: 1, memoryMiB: 1536, instance: { tags: ud.tags } });
    const clients: Vm[] = [];
    for (let i = 0; i < s.clients; i++) {
      clients.push(await lab.startVm({ name: `client-${i + 1}`, ip: `${SUBNET}.${21 + i}`, userData: '#!/bin/bash\ntrue\n', cpus: 1, memoryMiB: 768 }));
    }
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 30 * MIN }));
    for (const c of clients) {
      expectDone(c.name, await c.waitForCloudInit({ timeoutMs: 20 * MIN }));
      await c.execOk(`mkdir -p /mnt/node && mount -t nfs4 -o ${CLIENT_OPTIONS} ${NODE_IP}:/efs /mnt/node`, { timeoutMs: 5 * MIN });
    }
    // Warm: one read through the node fills its page cache (the origin is not shaped: its speed is not the point).
    await clients[0].execOk('cat /mnt/node/app/big.bin > /dev/null', { timeoutMs: 20 * MIN });
    const read = (c: Vm) => c.execOk(`${DROP} && dd if=/mnt/node/app/big.bin of=/dev/null bs=1M 2>&1 | tail -n 1`, { timeoutMs: 20 * MIN });
    const pass = async (readers: Vm[], times: number[], busy: number[]) => {
      await Promise.all(readers.map((c) => c.execOk(DROP)));
      const c0 = await cpu(node);
      const t0 = Date.now();
      await Promise.all(readers.map(read));
      const t = (Date.now() - t0) / 1000;
      const c1 = await cpu(node);
      times.push(t);
      busy.push((c1.busy - c0.busy) / Math.max(1, c1.total - c0.total));
    };
    for (let p = 0; p < s.passes; p++) {
      try {
        await pass([clients[0]], single, nodeBusySingle);
        await pass(clients, all, nodeBusyAll);
        log(`8. pass ${p + 1}: one client ${single[single.length - 1].toFixed(2)} s, ${s.clients} at once ${all[all.length - 1].toFixed(2)} s ` +
          `(node CPU busy ${(nodeBusySingle[nodeBusySingle.length - 1] * 100).toFixed(0)} % / ${(nodeBusyAll[nodeBusyAll.length - 1] * 100).toFixed(0)} %)`);
      } catch (e) {
        failures.push(`pass ${p + 1}: ${(e as Error).message.split('\n')[0]}`);
        log(`8. pass ${p + 1}: FAILED ${(e as Error).message}`);
      }
    }
    // What else could bound it: the node's own read of the file from its page cache, and the link to one client.
    const local = await node.execOk(`dd if=/efs/app/big.bin of=/dev/null bs=1M 2>&1 | tail -n 1`, { timeoutMs: 10 * MIN });
    log(`8. the node reading the file from its page cache: ${local.trim()}`);
    return {
      date,
      durationSeconds: (Date.now() - started) / 1000,
      machine: machine(true),
      settings: {
        'VMs': `QEMU with TCG (software emulation, no KVM) on the machine's cores, 1 vCPU each: origin 1024 MiB, cache node 1536 MiB, ${s.clients} clients 768 MiB`,
        'node': 'the library\'s node user data (re-export of the origin, nfsd 16 threads); the origin link not shaped (the file is warm on the node)',
        'clients': `mount the node's re-export with ${CLIENT_OPTIONS} (the fleet's client options without fsc, so every read reaches the node), and drop their caches before each pass`,
        'work': `one file of ${s.fileMiB} MiB read with dd (1 MiB blocks); ${s.passes} passes, each: one client alone, then all ${s.clients} at once; time from the host, from the first start to the last end`,
        'node CPU': 'busy share of the node\'s vCPU during each pass (/proc/stat: user, nice, system, irq, softirq over all)',
      },
      fileMiB: s.fileMiB,
      clients: s.clients,
      single,
      all,
      nodeBusySingle,
      nodeBusyAll,
      nodeLocal: local.trim(),
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-fanin lab destroyed');
  }
}
