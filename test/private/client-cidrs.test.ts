/**
 * The cache nodes' NFS export access list (`clientCidrs`): parsed at synth (lib/private/cidr.ts; the refusals are rows
 * of the bad-input tests (test/<folder>/bad-input.test.ts)), rendered in canonical form, and checked again by the node at boot for values synth
 * could not see (tokens). The node's check runs here in the sandbox of test/util/run-script.ts.
 */
import { CfnParameter, Fn } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity } from '../../lib';
import { formatCidr, parseCidr } from '../../lib/private/cidr';
import { labUserData } from '../heavy/lab/scenarios/stacks';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { launchTemplateUserData, parameters } from '../util/user-data';

describe('clientCidrs at synth', () => {
  test.each([
    ['10.1.0.0/16', '10.1.0.0/16'],
    ['FD00:0:0:0::/64', 'fd00::/64'],
    ['2001:db8:0:0:1:0:0:1/128', '2001:db8::1:0:0:1/128'],
    ['64:ff9b::10.0.0.0/104', '64:ff9b::a00:0/104'],
    ['1:2:3:4:5:6:7::/112', '1:2:3:4:5:6:7:0/112'],
  ])('%s is accepted and rendered as %s', (given, canonical) => {
    expect(formatCidr(parseCidr(undefined, 'clientCidrs', given))).toBe(canonical);
    const { stack, vpc } = stackWithVpc();
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), clientCidrs: ['10.9.0.0/16', given] });
    const [ud] = Object.values(launchTemplateUserData(stack));
    expect(parameters(ud).EFSC_EXPORT_CLIENTS).toBe(`10.9.0.0/16 ${canonical}`);
  });

  test('a token (a template parameter) passes synth unchanged: the node checks it at boot', () => {
    const { stack, vpc } = stackWithVpc();
    const clients = new CfnParameter(stack, 'Clients', { type: 'String' });
    new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1),
      clientCidrs: [clients.valueAsString, Fn.select(0, vpc.vpcCidrBlockAssociations)],
    });
    const [ud] = Object.values(launchTemplateUserData(stack));
    expect(parameters(ud).EFSC_EXPORT_CLIENTS).toMatch(/^<Ref:Clients> <Fn::Select:/);
  });

  test('the default is the VPC\'s CIDR block', () => {
    const { stack, vpc } = stackWithVpc();
    new CacheFleet(stack, 'Fleet', { vpc: vpc as ec2.IVpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1) });
    const [ud] = Object.values(launchTemplateUserData(stack));
    expect(parameters(ud).EFSC_EXPORT_CLIENTS).toMatch(/^<Fn::GetAtt:Vpc\w+\.CidrBlock>$/);
  });
});

describe('EFSC_EXPORT_CLIENTS at boot (the cache node\'s parameter check)', () => {
  const lab = labUserData();
  const ud = lab.cacheNode;
  const withClients = (value: string, args: string[] = []) => {
    const text = ud.replace(/^EFSC_EXPORT_CLIENTS='[^']*'$/m, `EFSC_EXPORT_CLIENTS='${value}'`);
    expect(text).toContain(`EFSC_EXPORT_CLIENTS='${value}'`);
    return runScript(text, args, { tags: lab.nodeTags[0] });
  };

  test.each([
    '0.0.0.0/0', '0/0', '10.0.0.0/0', '10.0.0.0/00', '::/0', '::0/0', '0000::/0', '10.0.0.0/33', '10.0.0.0/-1',
    '999.1.1.1/8', 'fd00::/129', 'fd00::/0128', 'FD00::/64', '10.0.0.0/8 0.0.0.0/0', 'garbage', '10.0.0.1',
  ])('%s is refused before anything is installed', (value) => {
    const run = withClients(value);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_EXPORT_CLIENTS='.*' is invalid: expected CIDRs with prefix lengths/);
    expect(run.calls.filter((c) => /^(dnf|apt-get|exportfs|systemctl) /.test(c))).toEqual([]);
  });

  test.each(['10.77.0.0/24', '10.0.0.0/8 fd00::/64', '192.168.1.7/32', '2001:db8::1:0:0:1/128 ::/1'])('%s passes the check', (value) => {
    // An unknown mode argument ends the run right after the parameter checks, which the message proves it passed.
    const run = withClients(value, ['--check-only']);
    expect(run.stderr).not.toMatch(/EFSC_EXPORT_CLIENTS/);
    expect(run.stderr).toMatch(/FATAL: unknown argument '--check-only'/);
  });
});
