import { Size } from 'aws-cdk-lib';
import { CachedFileSystem, CacheDashboard, CacheDashboardProps, OriginFileSystem } from '../../lib';
import { BadInput, refusesBadInput } from '../util/bad-input';

/** What the dashboard's alarm settings (CachedFileSystem monitoring) refuses at synth, or warns about, each case naming the prop to change. */
const CASES: BadInput[] = [
  {
    name: 'alarms: PercentIOLimit threshold over 100',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { percentIoLimitThreshold: 150 } }),
    error: /^Invalid percentIoLimitThreshold: is a percentage, more than 0 and at most 100, got 150/,
  },
  {
    name: 'alarms: throughput threshold of 0',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { throughputUtilizationThreshold: 0 } }),
    error: /^Invalid throughputUtilizationThreshold: is a percentage/,
  },
  {
    name: 'alarms: burst credit threshold of 0 bytes',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { burstCreditBalanceThreshold: Size.bytes(0) } }),
    error: /^Invalid burstCreditBalanceThreshold: must be more than 0 bytes/,
  },
  // The prop of 0.1 that 0.2 renamed, still given from JavaScript (which has no types): refused, naming the new one.
  {
    name: 'dashboard: the origin prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CacheDashboard(stack, 'Dashboard', {
      origin: new OriginFileSystem(stack, 'Origin', { vpc }),
    } as unknown as CacheDashboardProps),
    error: /^Invalid origin: was renamed originFileSystem in 0\.2/,
  },
];

refusesBadInput('bad input to the dashboard alarms names the prop', CASES);
