/**
 * Every deploy-time value is data wherever it lands, proved by a sweep generated from the jsii assembly rather than
 * written prop by prop: every prop of every construct and every option of every static factory that takes a string,
 * a number, a list, a `Duration` or a `Size` (test/sweep/assembly.ts), and the attributes of what a user imports,
 * are given hostile deploy-time values (test/sweep/sweep.ts); each is refused at synth naming its prop, or every
 * artifact it reaches is read as its consumer reads it (test/sweep/artifacts.ts) with no execution and no changed
 * meaning. The sweep proves itself first on a canary surface that renders a value raw on purpose.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnResource, Fn } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Finding } from './artifacts';
import { Leaf, loadAssembly, surfaceLeaves } from './assembly';
import { BUILDERS, CONSUMER_VARIANTS, IMPORTED_LEAVES } from './surfaces';
import { SurfaceReport, sweepSurface } from './sweep';

const { leaves, surfaces, unknown } = surfaceLeaves(loadAssembly());
const all: Leaf[] = [
  ...leaves, ...IMPORTED_LEAVES,
  ...Object.entries(CONSUMER_VARIANTS).flatMap(([surface, consumers]) => consumers.flatMap((consumer) =>
    leaves.filter((l) => l.surface === surface).map((l) => ({ ...l, surface: `${surface} > ${consumer}` })))),
];
const swept = [...new Set(all.map((l) => l.surface))];
const reports: SurfaceReport[] = [];

/**
 * What the library accepts, and why: a value that reaches an artifact whose meaning it can change, where neither
 * CloudFormation nor the artifact's format can hold it as data and refusing it would refuse the common use.
 */
const ACCEPTED: { surface: string; where: string; reason: string }[] = [
  {
    surface: 'efs.FileSystem.fromFileSystemAttributes', where: 'IAM',
    reason: 'aws-cdk-lib builds an imported file system\'s ARN from its id, and IAM reads * and ? in it as wildcards; a ' +
      'file system id given as a parameter or an import is the common way to reach an existing one, and EFS refuses any ' +
      'id not of the form fs-<hex> when the instances mount it (docs/security.md).',
  },
];
const accepted = (surface: string, f: Finding) => ACCEPTED.some((a) => a.surface === surface && a.where === f.where);

describe('the sweep of deploy-time values, generated from the jsii assembly', () => {
  test('it covers every surface the assembly lists, and every leaf is of a kind it tries', () => {
    expect(unknown).toEqual([]);
    // A surface with a leaf and no builder fails here: a new prop or factory cannot be left out.
    expect(swept.filter((s) => !BUILDERS[s])).toEqual([]);
    // No builder for a surface the assembly no longer has.
    expect(Object.keys(BUILDERS).filter((s) => !swept.includes(s))).toEqual([]);
    // Every surface the assembly lists either has leaves or takes nothing a token can stand for.
    expect(surfaces.length).toBeGreaterThan(25);
    expect(leaves.length).toBeGreaterThan(100);
  });

  test('the canary: a surface that renders values raw is caught, as an execution and as a changed meaning', () => {
    const canary = 'Canary';
    const leafs: Leaf[] = [{ surface: canary, path: 'props.text', kind: 'string' }];
    BUILDERS[canary] = (c) => {
      const value = c.value('props.text', 'x');
      new ec2.LaunchTemplate(c.stack, 'Raw', { userData: ec2.UserData.custom(`#!/bin/bash\nset -a\nEFSC_RAW='${value}'\nset +a\n`) });
      new CfnResource(c.stack, 'Manifest', { type: 'Custom::Raw', properties: { Manifest: Fn.join('', ['{"server":"', value, '"}']) } });
    };
    try {
      const r = sweepSurface(canary, leafs);
      expect(r.refused).toEqual([]);
      expect(r.findings.filter((f) => f.kind === 'execution').length).toBeGreaterThan(0);
      expect(r.findings.filter((f) => f.kind === 'changed meaning' && f.where === 'JSON').length).toBeGreaterThan(0);
      expect(r.findings.filter((f) => f.kind === 'changed meaning' && f.where === 'bash header').length).toBeGreaterThan(0);
    } finally {
      delete BUILDERS[canary];
    }
  });

  test.each(swept)('%s: every leaf refused at synth naming its prop, or data in every artifact it reaches', (surface) => {
    const r = sweepSurface(surface, all.filter((l) => l.surface === surface));
    reports.push(r);
    expect(r.unnamed).toEqual([]);
    // A refusal says it is the token's: a leaf refused for another reason (a prop the builder left out) was not tried.
    expect(r.refused.filter((x) => !/token|deploy time|known at synth/i.test(x.message))).toEqual([]);
    expect(r.findings.filter((f) => !accepted(surface, f))).toEqual([]);
    // Each leaf is accounted for: refused, or its places read (or it reached no artifact at all).
    for (const l of r.leaves) {
      const refused = r.refused.some((x) => x.leaf === l.path);
      expect({ leaf: l.path, accounted: refused || l.path in r.places }).toEqual({ leaf: l.path, accounted: true });
    }
  });

  afterAll(() => {
    if (reports.length === 0) return;
    const lines = ['surface | leaves | refused at synth | reached an artifact | synths | values tried | artifacts parsed | shell runs'];
    for (const r of reports) {
      const reached = Object.values(r.places).filter((p) => p.length > 0).length;
      lines.push(`${r.surface} | ${r.leaves.length} | ${r.refused.length} | ${reached} | ${r.synths} | ${r.valuesTried} | ${r.parsed.length} | ${r.runs}`);
    }
    const sum = (f: (r: SurfaceReport) => number) => reports.reduce((a, r) => a + f(r), 0);
    lines.push(`all ${reports.length} surfaces | ${sum((r) => r.leaves.length)} | ${sum((r) => r.refused.length)} | ` +
      `${sum((r) => Object.values(r.places).filter((p) => p.length > 0).length)} | ${sum((r) => r.synths)} | ${sum((r) => r.valuesTried)} | ` +
      `${sum((r) => r.parsed.length)} | ${sum((r) => r.runs)}`);
    lines.push('', 'accepted:', ...ACCEPTED.map((a) => `${a.surface} (${a.where}): ${a.reason}`));
    lines.push('', 'where each value lands:');
    for (const r of reports) {
      for (const x of r.refused) lines.push(`${r.surface} ${x.leaf}: refused: ${x.message}`);
      for (const [leaf, places] of Object.entries(r.places)) lines.push(`${r.surface} ${leaf}: ${places.length ? [...new Set(places)].join('; ') : 'reaches no artifact'}`);
    }
    const file = path.join(process.env.EFSC_SWEEP_REPORT ?? os.tmpdir(), 'deploy-time-values-sweep.txt');
    fs.writeFileSync(file, lines.join('\n') + '\n');
    console.log(`${lines.slice(0, reports.length + 2).join('\n')}\n(the whole list: ${file})`);
  });
});
