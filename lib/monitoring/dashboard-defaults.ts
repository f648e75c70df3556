import { Duration, Size } from 'aws-cdk-lib';

/** The period and evaluation periods of one alarm of the dashboard, and its threshold where no prop sets it. */
export interface AlarmDefaults {
  readonly period: Duration;
  readonly evaluationPeriods: number;
  readonly threshold?: number;
}

/**
 * The defaults of `CacheDashboardOptions`, which a `CacheDashboard` applies (test/defaults.test.ts), and the settings
 * of its figures and alarms that no prop sets yet: `display` and `alarms`, each alarm under its name.
 */
export const CACHE_DASHBOARD_DEFAULTS = {
  percentIoLimitThreshold: 90,
  throughputUtilizationThreshold: 90,
  burstCreditBalanceThreshold: Size.tebibytes(1),
  /** EFS Elastic throughput's read price in us-east-1, in US dollars per GB (docs/sizing-and-cost.md: sources, dates). */
  efsReadPricePerGb: 0.03,
  /** The time range the dashboard opens with, and the periods of the figures it computes. */
  display: {
    defaultInterval: Duration.hours(3),
    /** The headline's share of reads served by the caches. */
    offloadSharePeriod: Duration.minutes(5),
    /** EFS metered throughput per second, against permitted throughput. */
    meteredThroughputPeriod: Duration.minutes(1),
    /** The headline's EFS read charges avoided: summed per hour, to set against the fleet's hourly price. */
    readChargesAvoidedPeriod: Duration.hours(1),
  },
  alarms: {
    percentIoLimit: { period: Duration.minutes(1), evaluationPeriods: 5 },
    throughputNearLimit: { period: Duration.minutes(1), evaluationPeriods: 5 },
    burstCreditsLow: { period: Duration.minutes(5), evaluationPeriods: 3 },
    /** The period is that of the per-10-node inputs (`NoNodeInService`N); the fleet's own metric keeps its period. */
    noHealthyCacheNode: { period: Duration.minutes(1), evaluationPeriods: 2, threshold: 1 },
    /** The threshold is each client group's `cullLimits.blocksCull`. */
    cullingStalled: { period: Duration.minutes(5), evaluationPeriods: 3 },
    /** `CacheNotServing`N and `NodeCacheNotServing`: periods "written but not serving" (`NOT_SERVING`). */
    cacheNotServing: { period: Duration.minutes(15), evaluationPeriods: 4, threshold: 1 },
    mirrorSyncFailing: { period: Duration.minutes(5), evaluationPeriods: 3, threshold: 1 },
    mirrorFull: { period: Duration.minutes(5), evaluationPeriods: 1, threshold: 1 },
  },
} as const;

/** How long an alarm with these settings waits before it fires, in words: `15 minutes`, `an hour`. */
export function alarmSpan(a: AlarmDefaults): string {
  const minutes = a.period.toMinutes() * a.evaluationPeriods;
  return minutes === 60 ? 'an hour' : `${minutes} minutes`;
}
