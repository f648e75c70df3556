import { Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as efs from 'aws-cdk-lib/aws-efs';
import { CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import type { MonitoredOrigin } from './monitored';
import { DashboardSegment } from './segment';

/** The thresholds of the origin's alarms, as the dashboard's options set them. */
export interface OriginThresholds {
  readonly percentIoLimit: number;
  readonly throughputUtilization: number;
  readonly burstCreditBalance: Size;
}

/**
 * The origin EFS file system: I/O, metered against permitted throughput, PercentIOLimit, client connections, storage
 * and burst credits (bursting or unknown mode); alarms `PercentIoLimit` (General Purpose), `ThroughputNearLimit` and
 * `BurstCreditsLow` (Bursting).
 */
export function originSegment(o: MonitoredOrigin, thresholds: OriginThresholds): DashboardSegment {
  const limits: cloudwatch.IWidget[] = [
    new cloudwatch.GraphWidget({ title: 'EFS PercentIOLimit', width: 8, left: [o.metricPercentIoLimit()], leftYAxis: { min: 0, max: 100 } }),
    new cloudwatch.GraphWidget({ title: 'EFS client connections', width: 8, left: [o.metricClientConnections()] }),
    new cloudwatch.GraphWidget({ title: 'EFS storage (bytes)', width: 8, left: [o.metricStorageBytes()] }),
  ];
  if (o.throughputMode === efs.ThroughputMode.BURSTING || o.throughputMode === undefined) {
    limits.push(new cloudwatch.GraphWidget({ title: 'EFS burst credits (bytes)', width: 8, left: [o.metricBurstCreditBalance()] }));
  }
  const rows = [
    [
      new cloudwatch.GraphWidget({
        title: 'EFS I/O (bytes per minute)', width: 12,
        left: [o.metricTotalIoBytes(), o.metricDataReadIoBytes(), o.metricDataWriteIoBytes(), o.metricMetadataIoBytes(), o.metricMeteredIoBytes()],
      }),
      new cloudwatch.GraphWidget({
        title: 'EFS throughput: metered vs permitted (bytes per second)', width: 12,
        left: [meteredPerSecond(o), o.metricPermittedThroughput({ label: 'PermittedThroughput' })],
      }),
    ],
    limits,
  ];
  const a = CACHE_DASHBOARD_DEFAULTS.alarms;
  return {
    rows,
    addAlarms: (alarms) => {
      if (o.performanceMode !== efs.PerformanceMode.MAX_IO) {
        alarms.alarm('PercentIoLimit', o.metricPercentIoLimit({ period: a.percentIoLimit.period }), {
          threshold: thresholds.percentIoLimit,
          evaluationPeriods: a.percentIoLimit.evaluationPeriods,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          alarmDescription: 'EFS is near its General Purpose I/O limit: more reads through the caches, or fewer clients on EFS.',
        });
      }
      alarms.alarm('ThroughputNearLimit', new cloudwatch.MathExpression({
        expression: '100 * (m / 60) / p',
        usingMetrics: { m: o.metricMeteredIoBytes(), p: o.metricPermittedThroughput() },
        label: 'metered throughput, % of permitted',
        period: a.throughputNearLimit.period,
      }), {
        threshold: thresholds.throughputUtilization,
        evaluationPeriods: a.throughputNearLimit.evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        alarmDescription: 'EFS metered throughput is near its permitted throughput: reads are being throttled or soon will be.',
      });
      if (o.throughputMode === efs.ThroughputMode.BURSTING) {
        alarms.alarm('BurstCreditsLow', o.metricBurstCreditBalance({ period: a.burstCreditsLow.period }), {
          threshold: thresholds.burstCreditBalance.toBytes({ rounding: SizeRoundingBehavior.NONE }),
          evaluationPeriods: a.burstCreditsLow.evaluationPeriods,
          comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
          alarmDescription: 'EFS burst credits are falling: when they run out, throughput drops to the baseline.',
        });
      }
    },
  };
}

/** EFS metered throughput per second (MeteredIOBytes is a sum per minute). */
function meteredPerSecond(o: MonitoredOrigin): cloudwatch.IMetric {
  return new cloudwatch.MathExpression({
    expression: 'm / 60',
    usingMetrics: { m: o.metricMeteredIoBytes() },
    label: 'metered (MeteredIOBytes / 60 s)',
    period: CACHE_DASHBOARD_DEFAULTS.display.meteredThroughputPeriod,
  });
}
