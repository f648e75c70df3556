import { CfnParameter, Size } from 'aws-cdk-lib';
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
  {
    name: 'savings: a negative EFS read price',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { efsReadPricePerGb: -0.03 } }),
    error: /^Invalid efsReadPricePerGb: is a price in US dollars per GB, a finite number of at least 0, got -0\.03\./,
  },
  {
    name: 'savings: an EFS read price that is not finite',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { efsReadPricePerGb: Number.POSITIVE_INFINITY } }),
    error: /^Invalid efsReadPricePerGb: is a price in US dollars per GB, a finite number of at least 0, got Infinity\./,
  },
  {
    name: 'savings: an EFS read price that is not a number (NaN)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { efsReadPricePerGb: Number.NaN } }),
    error: /^Invalid efsReadPricePerGb: .* got NaN\./,
  },
  // From JavaScript, which has no types: a string would be spliced into the metric math as it is.
  {
    name: 'savings: an EFS read price given as a string (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { efsReadPricePerGb: '0.03' as unknown as number } }),
    error: /^Invalid efsReadPricePerGb: is a price in US dollars per GB, a finite number of at least 0, got '0\.03'\./,
  },
  {
    name: 'savings: an EFS read price known only at deploy time (a parameter)',
    build: (stack, vpc) => new CacheDashboard(stack, 'Dashboard', {
      originFileSystem: new OriginFileSystem(stack, 'Origin', { vpc }),
      efsReadPricePerGb: new CfnParameter(stack, 'Price', { type: 'Number' }).valueAsNumber,
    }),
    error: /^Invalid efsReadPricePerGb: must be known at synth \(it is written into the dashboard's metric math\), got parameter Price/,
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
