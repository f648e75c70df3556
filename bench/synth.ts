/**
 * Part 5: how synthesis cost grows with the fleet. A VPC and a CachedFileSystem with N cache nodes, constructed and
 * synthesized in this process (what `cdk synth` does), timed; the template file's size and resource count.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CachedFileSystem, Capacity } from '../lib';
import { newApp } from '../test/util';
import { machine, SynthResults, SynthRow } from './results';

function synthOnce(nodes: number, dashboard: boolean, elastic = false): { seconds: number; templateBytes: number; resources: number } {
  const started = process.hrtime.bigint();
  const app = newApp();
  const stack = new Stack(app, 'Bench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
  // An elastic fleet is behind the load balancer by default.
  const cacheFleet = { capacity: elastic ? Capacity.elastic({ maxNodes: nodes }) : Capacity.nodes(nodes) };
  new CachedFileSystem(stack, 'Data', { vpc, cacheFleet, dashboard });
  let assembly;
  // CDK prints annotations while synthesizing (the 64-node template's size warning among them); the size is measured.
  const { log, warn, error } = console;
  console.log = console.warn = console.error = () => undefined;
  try {
    assembly = app.synth();
  } finally {
    Object.assign(console, { log, warn, error });
    if (!assembly) fs.rmSync(app.outdir, { recursive: true, force: true });
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const file = path.join(assembly.directory, assembly.getStackByName(stack.stackName).templateFile);
  const template = JSON.parse(fs.readFileSync(file, 'utf8'));
  const result = { seconds, templateBytes: fs.statSync(file).size, resources: Object.keys(template.Resources ?? {}).length };
  fs.rmSync(app.outdir, { recursive: true, force: true });
  return result;
}

/** The message of a synthesis error without CDK's construct-tree dump. */
function firstLine(message: string): string {
  const line = message.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
  // The reason, not its explanation: up to the first sentence's "got N", or 120 characters.
  const got = /^.*?\bgot \S+?(?=[:;,.]?\s|$)/.exec(line)?.[0];
  if (got) return got;
  return line.length <= 120 ? line : `${line.slice(0, line.lastIndexOf(' ', 120))} ...`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function runSynth(nodeCounts: number[], repeats: number, log: (m: string) => void, elasticMaxNodes: number[] = []): SynthResults {
  const date = new Date().toISOString();
  const started = Date.now();
  // The first syntheses in a process load and compile aws-cdk-lib's modules: not counted.
  for (let i = 0; i < 3; i++) synthOnce(Math.min(8, ...nodeCounts), true);
  const rows: SynthRow[] = [];
  for (const nodes of nodeCounts) {
    // The default stack, with its dashboard; if that does not synthesize, the error is recorded and the same stack
    // without the dashboard is tried, so that the growth of the rest is still seen.
    let dashboard = true;
    let defaultError: string | undefined;
    try {
      synthOnce(nodes, true);
    } catch (e) {
      dashboard = false;
      defaultError = firstLine((e as Error).message);
      log(`synth ${nodes} node(s) with the default dashboard failed: ${defaultError}`);
      try {
        synthOnce(nodes, false);
      } catch (e2) {
        const error = firstLine((e2 as Error).message);
        log(`synth ${nodes} node(s) without the dashboard failed too: ${error}`);
        rows.push({ nodes, samples: [], dashboard: false, defaultError, error });
        continue;
      }
    }
    const runs = Array.from({ length: repeats }, () => synthOnce(nodes, dashboard));
    const samples = runs.map((r) => r.seconds);
    rows.push({
      nodes, seconds: median(samples), samples, templateBytes: runs[0].templateBytes, resources: runs[0].resources, dashboard,
      ...(defaultError ? { defaultError } : {}),
    });
    log(`synth ${nodes} node(s)${dashboard ? '' : ' without dashboard'}: ${samples.map((v) => v.toFixed(2)).join(', ')} s; ` +
      `template ${runs[0].templateBytes} B, ${runs[0].resources} resources`);
  }
  // Elastic fleets: one group whatever maxNodes, so the template should not grow with it.
  for (const nodes of elasticMaxNodes) {
    const runs = Array.from({ length: repeats }, () => synthOnce(nodes, true, true));
    const samples = runs.map((r) => r.seconds);
    rows.push({
      nodes, seconds: median(samples), samples, templateBytes: runs[0].templateBytes, resources: runs[0].resources, dashboard: true, elastic: true,
    });
    log(`synth an elastic fleet of up to ${nodes} node(s): ${samples.map((v) => v.toFixed(2)).join(', ')} s; ` +
      `template ${runs[0].templateBytes} B, ${runs[0].resources} resources`);
  }
  return {
    date,
    durationSeconds: (Date.now() - started) / 1000,
    machine: machine(false),
    settings: {
      stack: 'a two-AZ VPC and a CachedFileSystem (a new EFS file system, the default dashboard) with cacheFleet.capacity = Capacity.nodes(N)' +
        (elasticMaxNodes.length ? ', or (elastic rows) an elastic fleet behind the NLB with cacheFleet.capacity = Capacity.elastic({ maxNodes: N })' : ''),
      timing: `construct + app.synth() in one Node.js process, median of ${repeats}, after three uncounted warm-up syntheses ` +
        '(each node count is synthesized once more, uncounted, to see whether the default stack synthesizes)',
    },
    rows,
  };
}
