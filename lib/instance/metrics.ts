import { Duration } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { propError } from '../private/errors';

/**
 * The namespace of the metrics the instances publish through the CloudWatch agent. Every metric carries the
 * dimension `Group`: the construct path of the cache fleet or client launch template that launched the instance,
 * so the dashboard aggregates per tier without knowing instance ids. The agent adds the dimension `metric_type`
 * (`counter` or `gauge`, from the StatsD type) to what it receives over StatsD; it adds no host dimension
 * (`omit_hostname`), so every instance of a group publishes to the same series.
 */
export const METRIC_NAMESPACE = 'CdkEfsCache';

/**
 * One metric the instances publish (namespace CdkEfsCache): its name, which is the contract with the collectors in
 * assets/, the StatsD type they send it as (a `counter` of what happened since the last run, `|c`, or a `gauge`,
 * `|g`: the agent publishes it as the dimension `metric_type`), and the statistic that reads it over a period: the
 * fleet's and the clients' metric methods read these (`groupMetric`), and the dashboard reads those methods, so a
 * metric's name and statistic are written here only.
 */
export interface InstanceMetric {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly statistic: 'Sum' | 'Average' | 'Minimum' | 'Maximum';
}

/** A metric sent as a StatsD counter (what happened since the last run), read as its sum per period. */
export const counter = (name: string): InstanceMetric => ({ name, type: 'counter', statistic: 'Sum' });
/** A metric sent as a StatsD gauge, read with `statistic`. */
export const gauge = (name: string, statistic: InstanceMetric['statistic']): InstanceMetric => ({ name, type: 'gauge', statistic });

/** A metric CloudWatch keeps of each node's Auto Scaling group: its namespace, name and the statistic that reads it. */
export interface NodeGroupMetric {
  readonly namespace: 'AWS/EC2' | 'AWS/AutoScaling';
  readonly name: string;
  readonly statistic: 'Sum' | 'Average' | 'Minimum' | 'Maximum';
}

/** A metric of one Auto Scaling group (`NODE_GROUP_METRICS`). */
export function autoScalingGroupMetric(
  group: autoscaling.IAutoScalingGroup, metric: NodeGroupMetric, props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metric.namespace,
    metricName: metric.name,
    dimensionsMap: { AutoScalingGroupName: group.autoScalingGroupName },
    statistic: metric.statistic,
    period: Duration.minutes(1),
    ...props,
  });
}

/** The sum of several metrics, per minute (CloudWatch metric math; an alarm takes at most 10 of them). */
export function sumOfMetrics(metrics: cloudwatch.IMetric[], label: string, props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
  const usingMetrics: Record<string, cloudwatch.IMetric> = {};
  metrics.forEach((m, i) => { usingMetrics[`n${i}`] = m; });
  return new cloudwatch.MathExpression({
    expression: Object.keys(usingMetrics).join(' + '),
    usingMetrics,
    label,
    period: Duration.minutes(1),
    ...props,
  });
}

/** A metric of the instances' own namespace (`NODE_METRICS`, `CLIENT_METRICS`), for one fleet or client group. */
export function groupMetric(group: string, metric: InstanceMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: metric.name,
    dimensionsMap: { Group: group, metric_type: metric.type },
    statistic: metric.statistic,
    period: Duration.minutes(1),
    ...props,
  });
}

/**
 * The `EFSC_METRICS*` parameters of an instance script (assets/lib/metrics.sh) whose `Group` is `scope`'s path. The
 * permission to publish them is the instance role's (`grantPutMetricData`, metrics-grant.ts).
 */
export function instanceMetrics(scope: Construct, enabled = true): Record<string, string> {
  if (!enabled) return { EFSC_METRICS: 'off', EFSC_METRICS_GROUP: '' };
  const group = scope.node.path;
  if (!/^[A-Za-z0-9/_.-]{1,255}$/.test(group)) {
    throw propError(scope, 'metrics', `the metrics dimension Group is the construct path '${group}', which must be 1-255 ` +
      'letters, digits, / _ . or -: rename the constructs, or set metrics: false.');
  }
  return { EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: group };
}
