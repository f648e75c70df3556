import { Duration, Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwactions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct, IConstruct } from 'constructs';
// The dashboard reads the tiers through their metric methods and the metric table: the tiers' modules are imported
// for their types only, so the dashboard is a leaf of the module graph (the tiers never import it back).
import type { CacheFleet } from '../cache-fleet/cache-fleet';
import type { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import type { OriginFileSystem } from '../origin/origin-file-system';
import { DiskCacheMetric, MirrorMetric, NOT_SERVING, notServingExpression } from './metrics';
import { knownAtSynth, propError } from '../private/errors';
import { acknowledgeCompliance } from '../private/nag';
import { REMOVED_DASHBOARD_PROPS, refuseRemovedProps } from '../private/removed-props';

/** The period of the "written but not serving" alarms (`NOT_SERVING`), evaluated over 4 of them. */
const NOT_SERVING_PERIOD = Duration.minutes(15);

/** CloudWatch refuses alarms whose math expression uses more metrics than this. */
const MAX_ALARM_METRICS = 10;

/** Options of the dashboard and its alarms, shared with `CachedFileSystem`. */
export interface CacheDashboardOptions {
  /**
   * Name of the dashboard.
   *
   * @default - a name CloudFormation generates
   */
  readonly dashboardName?: string;

  /**
   * Topic that every alarm notifies (in alarm and back to OK).
   *
   * @default - alarms without actions: they show on the dashboard and notify no one (the NIST 800-53 R5 and HIPAA
   * Security packs' `CloudWatchAlarmAction` is acknowledged on each of them with that reason)
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * PercentIOLimit (General Purpose) above which the I/O-limit alarm fires.
   *
   * @default 90
   */
  readonly percentIoLimitThreshold?: number;

  /**
   * Metered throughput, in percent of PermittedThroughput, above which the throughput alarm fires.
   *
   * @default 90
   */
  readonly throughputUtilizationThreshold?: number;

  /**
   * BurstCreditBalance below which the burst-credit alarm fires (Bursting throughput only).
   *
   * @default Size.tebibytes(1)
   */
  readonly burstCreditBalanceThreshold?: Size;
}

/** The defaults of `CacheDashboardOptions`, which a `CacheDashboard` applies (test/defaults.test.ts). */
export const CACHE_DASHBOARD_DEFAULTS = {
  percentIoLimitThreshold: 90,
  throughputUtilizationThreshold: 90,
  burstCreditBalanceThreshold: Size.tebibytes(1),
} as const;

/** Properties of `CacheDashboard`. */
export interface CacheDashboardProps extends CacheDashboardOptions {
  /** The origin file system, whose EFS metrics the dashboard shows and alarms on. */
  readonly originFileSystem: OriginFileSystem;
  /**
   * The cache fleet.
   *
   * @default - no cache tier widgets or alarms
   */
  readonly cacheFleet?: CacheFleet;
}

/**
 * A CloudWatch dashboard and alarms that show whether the caches pay off and whether anything is near a limit.
 * Its first figure is what the cache tiers served against what EFS served.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
 */
export class CacheDashboard extends Construct {
  /** The dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;
  /** Every alarm created, in creation order. */
  public readonly alarms: cloudwatch.Alarm[] = [];
  /** Composite alarms: "no healthy cache node" over a Route 53 fleet of more than 10 nodes. */
  public readonly compositeAlarms: cloudwatch.CompositeAlarm[] = [];
  private readonly props: CacheDashboardProps;
  private readonly clientServed: cloudwatch.IMetric[] = [];

  constructor(scope: Construct, id: string, props: CacheDashboardProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_DASHBOARD_PROPS);
    validateDashboardOptions(this, props);
    this.props = props;
    const o = props.originFileSystem;
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });

    // The headline: bytes the cache tiers served against bytes read from EFS.
    // Client groups may be added later (addClients), so the headline widgets are built when the dashboard renders.
    const headline = new RenderedLater(16, 6, () => new cloudwatch.GraphWidget({
      title: 'Reads served by the cache tiers vs read from EFS (bytes per minute)',
      width: 16,
      left: [o.metricDataReadIoBytes({ label: 'read from EFS (DataReadIOBytes)' }), ...this.served()],
    }));
    const offload = new RenderedLater(8, 6, () => new cloudwatch.SingleValueWidget({
      title: 'Share of reads served by caches (%)',
      width: 8,
      height: 6,
      metrics: [this.offloadShare()],
    }));
    this.dashboard.addWidgets(new cloudwatch.TextWidget({
      markdown: '## EFS cache\nHeadline: bytes served by the cache tiers against bytes read from EFS. The higher the ' +
        'share served by caches, the less the workload pays EFS for reads.',
      width: 24, height: 2,
    }));
    this.dashboard.addWidgets(headline, offload);

    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'EFS I/O (bytes per minute)', width: 12,
        left: [o.metricTotalIoBytes(), o.metricDataReadIoBytes(), o.metricDataWriteIoBytes(), o.metricMetadataIoBytes(), o.metricMeteredIoBytes()],
      }),
      new cloudwatch.GraphWidget({
        title: 'EFS throughput: metered vs permitted (bytes per second)', width: 12,
        left: [this.meteredPerSecond(), o.metricPermittedThroughput({ label: 'PermittedThroughput' })],
      }),
    );
    const limits: cloudwatch.IWidget[] = [
      new cloudwatch.GraphWidget({ title: 'EFS PercentIOLimit', width: 8, left: [o.metricPercentIoLimit()], leftYAxis: { min: 0, max: 100 } }),
      new cloudwatch.GraphWidget({ title: 'EFS client connections', width: 8, left: [o.metricClientConnections()] }),
      new cloudwatch.GraphWidget({ title: 'EFS storage (bytes)', width: 8, left: [o.metricStorageBytes()] }),
    ];
    if (o.throughputMode === efs.ThroughputMode.BURSTING || o.throughputMode === undefined) {
      limits.push(new cloudwatch.GraphWidget({ title: 'EFS burst credits (bytes)', width: 8, left: [o.metricBurstCreditBalance()] }));
    }
    this.dashboard.addWidgets(...limits);

    if (o.performanceMode !== efs.PerformanceMode.MAX_IO) {
      this.alarm('PercentIoLimit', o.metricPercentIoLimit({ period: Duration.minutes(1) }), {
        threshold: props.percentIoLimitThreshold ?? CACHE_DASHBOARD_DEFAULTS.percentIoLimitThreshold,
        evaluationPeriods: 5,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        alarmDescription: 'EFS is near its General Purpose I/O limit: more reads through the caches, or fewer clients on EFS.',
      });
    }
    this.alarm('ThroughputNearLimit', new cloudwatch.MathExpression({
      expression: '100 * (m / 60) / p',
      usingMetrics: { m: o.metricMeteredIoBytes(), p: o.metricPermittedThroughput() },
      label: 'metered throughput, % of permitted',
      period: Duration.minutes(1),
    }), {
      threshold: props.throughputUtilizationThreshold ?? CACHE_DASHBOARD_DEFAULTS.throughputUtilizationThreshold,
      evaluationPeriods: 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      alarmDescription: 'EFS metered throughput is near its permitted throughput: reads are being throttled or soon will be.',
    });
    if (o.throughputMode === efs.ThroughputMode.BURSTING) {
      const credits = props.burstCreditBalanceThreshold ?? CACHE_DASHBOARD_DEFAULTS.burstCreditBalanceThreshold;
      const threshold = credits.toBytes({ rounding: SizeRoundingBehavior.NONE });
      this.alarm('BurstCreditsLow', o.metricBurstCreditBalance({ period: Duration.minutes(5) }), {
        threshold,
        evaluationPeriods: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        alarmDescription: 'EFS burst credits are falling: when they run out, throughput drops to the baseline.',
      });
    }

    const f = props.cacheFleet;
    if (f) {
      const perNode = f.nodes.map((n) => n.metricNetworkOut({ label: `node ${n.nodeNumber}` }));
      this.dashboard.addWidgets(
        f.autoScalingGroup
          ? new cloudwatch.GraphWidget({ title: 'Cache nodes: NetworkOut in total (bytes per minute) and nodes in service', width: 12,
            left: [f.metricNetworkOut({ label: 'total' })], right: [f.metricNodesInService({ label: 'nodes in service' })], rightYAxis: { min: 0 } })
          : new cloudwatch.GraphWidget({ title: 'Cache nodes: NetworkOut per node and total (bytes per minute)', width: 12, left: [...perNode, f.metricNetworkOut({ label: 'total' })] }),
        new cloudwatch.GraphWidget({ title: 'Cache nodes: CPU (%)', width: 12, left: f.autoScalingGroup
          ? [f.metricCpuUtilization({ label: 'average over the nodes' })]
          : f.nodes.map((n) => n.metricCpuUtilization({ label: `node ${n.nodeNumber}` })) }),
      );
      this.dashboard.addWidgets(
        new cloudwatch.GraphWidget({ title: 'Cache nodes: NFS operations and queued requests', width: 8, left: [f.metricNfsdOps()], right: [f.metricNfsdRequestsQueued()] }),
        new cloudwatch.GraphWidget({ title: 'Cache nodes: page cache (bytes) and nfsd threads', width: 8, left: [f.metricPageCacheBytes()], right: [f.metricNfsdThreads()] }),
        new cloudwatch.GraphWidget({ title: 'Cache nodes: healthy', width: 8, left: [f.metricHealthyNodes()], leftYAxis: { min: 0 } }),
      );
      const lb = f.loadBalancer;
      if (lb) {
        this.dashboard.addWidgets(
          new cloudwatch.GraphWidget({ title: 'NLB: healthy hosts', width: 8, left: [f.targetGroup!.metrics.healthyHostCount()] }),
          new cloudwatch.GraphWidget({ title: 'NLB: processed bytes', width: 8, left: [lb.metrics.processedBytes()] }),
          new cloudwatch.GraphWidget({ title: 'NLB: active flows', width: 8, left: [lb.metrics.activeFlowCount()] }),
        );
      }
      if (f.nodeDiskCache._enabled) {
        this.dashboard.addWidgets(this.diskCacheWidget('Cache nodes', (m, label) => f.metricNodeDiskCache(m, { label })),
          new cloudwatch.GraphWidget({ title: 'Cache nodes: disk cache free (%)', width: 12,
            left: [f.metricNodeDiskCache(DiskCacheMetric.FREE_PERCENT)], leftYAxis: { min: 0, max: 100 } }));
        this.notServingAlarm('NodeCacheNotServing', `the cache nodes of ${f.node.path}`, (m) => f.metricNodeDiskCache(m, { period: NOT_SERVING_PERIOD }));
      }
      if (f.mirrorExports.length > 0) this.addMirrors(f);
      const noHealthy = {
        threshold: 1,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      };
      const description = 'No cache node is healthy: clients of the cache fleet cannot read.';
      if (f.targetGroup || f.nodes.length <= MAX_ALARM_METRICS) {
        this.alarm('NoHealthyCacheNode', f.metricHealthyNodes(), { ...noHealthy, alarmDescription: description });
      } else {
        // An alarm's math expression takes at most 10 metrics and each node is a group of its own: one alarm per 10
        // nodes ("none of these is in service"), and a composite alarm, with the actions, when all of them are.
        const parts: cloudwatch.Alarm[] = [];
        for (let start = 0; start < f.nodes.length; start += MAX_ALARM_METRICS) {
          const nodes = f.nodes.map((_n, i) => i).slice(start, start + MAX_ALARM_METRICS);
          const usingMetrics: Record<string, cloudwatch.IMetric> = {};
          for (const i of nodes) usingMetrics[`n${i}`] = f.nodes[i].metricInService();
          const part = new cloudwatch.Alarm(this, `NoNodeInService${start / MAX_ALARM_METRICS + 1}`, {
            metric: new cloudwatch.MathExpression({
              expression: Object.keys(usingMetrics).join(' + '), usingMetrics, period: Duration.minutes(1),
              label: `Cache nodes ${nodes[0] + 1} to ${nodes[nodes.length - 1] + 1} in service`,
            }),
            ...noHealthy,
            alarmDescription: `None of cache nodes ${nodes[0] + 1} to ${nodes[nodes.length - 1] + 1} is in service ` +
              '(an input of the NoHealthyCacheNode composite alarm, which notifies).',
          });
          acknowledgeCompliance(part, 'CloudWatchAlarmAction',
            'An input of a composite alarm; the composite alarm has the actions, so the outage notifies once.');
          parts.push(part);
        }
        const composite = new cloudwatch.CompositeAlarm(this, 'NoHealthyCacheNode', {
          alarmRule: cloudwatch.AlarmRule.allOf(...parts.map((a) => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM))),
          alarmDescription: description,
        });
        this.notify(composite);
        this.alarms.push(...parts);
        this.compositeAlarms.push(composite);
      }
    }
  }

  /**
   * Adds a group of FS-Cache clients: widgets of their disk caches, and alarms when culling stalls or caches stop
   * serving.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   */
  public addClients(clients: FsCacheClientLaunchTemplate): void {
    const n = this.clientServed.length + 1;
    // Bytes read from the cache devices: on every kernel, what FS-Cache served (FS-Cache's own read count means
    // hit-or-miss on 6.1 and hits on later kernels).
    this.clientServed.push(clients.metricDiskCache(DiskCacheMetric.READ_BYTES, { label: `served by FS-Cache, ${clients.node.id}` }));
    this.dashboard.addWidgets(
      this.diskCacheWidget(`FS-Cache ${clients.node.id}`, (m, label) => clients.metricDiskCache(m, { label })),
      new cloudwatch.GraphWidget({
        title: `FS-Cache ${clients.node.id}: cache disk free (%)`, width: 12,
        left: [clients.metricCacheDiskFreePercent()], leftYAxis: { min: 0, max: 100 },
      }),
    );
    this.alarm(`CullingStalled${n}`, clients.metricCacheDiskFreePercent({ period: Duration.minutes(5) }), {
      threshold: clients.cullLimits.blocksCull!,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      alarmDescription: `FS-Cache disk of ${clients.node.path} stayed below its cull limit (${clients.cullLimits.blocksCull!}% free) for 15 minutes: culling is not keeping up or has stopped.`,
    });
    this.notServingAlarm(`CacheNotServing${n}`, `the FS-Cache clients of ${clients.node.path}`, (m) => clients.metricDiskCache(m, { period: NOT_SERVING_PERIOD }));
  }

  /** The disk cache of a tier: bytes served (device reads), written, and the growth of what it holds; objects culled. */
  private diskCacheWidget(title: string, metric: (m: DiskCacheMetric, label: string) => cloudwatch.IMetric): cloudwatch.GraphWidget {
    return new cloudwatch.GraphWidget({
      title: `${title}: disk cache bytes served, written and held anew (per minute)`, width: 12,
      left: [
        metric(DiskCacheMetric.READ_BYTES, 'served (device reads)'),
        metric(DiskCacheMetric.WRITE_BYTES, 'written'),
        metric(DiskCacheMetric.GROWTH_BYTES, 'growth of what it holds'),
      ],
      right: [metric(DiskCacheMetric.FSCACHE_CULLED, 'objects culled')],
    });
  }

  /**
   * An alarm when a group's disk caches are "written but not serving" (`NOT_SERVING`) in each of 4 periods of 15
   * minutes: they keep storing again what they held, and serve almost nothing of it.
   */
  private notServingAlarm(id: string, who: string, metric: (m: DiskCacheMetric) => cloudwatch.IMetric): void {
    this.alarm(id, notServingExpression(metric, `disk cache of ${who} written but not serving`, NOT_SERVING_PERIOD), {
      threshold: 1,
      evaluationPeriods: 4,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The disk cache of ${who} was written but did not serve for an hour: in each 15 minutes they ` +
        `wrote at least ${NOT_SERVING.minWriteBytes / 1024 / 1024} MiB to it, at least ${NOT_SERVING.rewriteShare * 100}% of ` +
        `it stored again what the cache held, and its device served less than ${NOT_SERVING.readShare * 100}% of that. ` +
        'FS-Cache stores but does not serve on this kernel, or the cache is too small for the data read again (docs/operations.md: "A cache that shows it serves").',
    });
  }

  private served(): cloudwatch.IMetric[] {
    const f = this.props.cacheFleet;
    return [...(f ? [f.metricNfsdBytesRead({ label: 'served by cache nodes (nfsd reads)' })] : []), ...this.clientServed];
  }

  /** Percent of read bytes served by the caches: served / (served + read from EFS). */
  private offloadShare(): cloudwatch.IMetric {
    const served = this.served();
    const usingMetrics: Record<string, cloudwatch.IMetric> = { efs: this.props.originFileSystem.metricDataReadIoBytes() };
    served.forEach((m, i) => { usingMetrics[`c${i}`] = m; });
    const cacheSum = served.map((_m, i) => `FILL(c${i}, 0)`).join(' + ') || '0';
    return new cloudwatch.MathExpression({
      expression: `100 * (${cacheSum}) / ((${cacheSum}) + FILL(efs, 0))`,
      usingMetrics,
      label: '% of reads served by caches',
      period: Duration.minutes(5),
    });
  }

  /**
   * The mirrors of a fleet (`mirrors`): age of the copies, the syncs' own cost (seconds, files walked, origin
   * requests), failures and space; alarms when syncs keep failing (clients see an older copy) and when a tree no
   * longer fits the nodes' `mirroring.size`.
   */
  private addMirrors(f: CacheFleet): void {
    const m = (name: MirrorMetric, label: string) => f.metricMirror(name, { label });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Mirrors: age of the oldest copy (s) and failed syncs', width: 8,
        left: [m(MirrorMetric.AGE_SECONDS, 'age (s)')], right: [m(MirrorMetric.SYNC_FAILURES, 'failed syncs')] }),
      new cloudwatch.GraphWidget({ title: 'Mirrors: sync cost (seconds, files walked, origin requests)', width: 8,
        left: [m(MirrorMetric.SYNC_SECONDS, 'seconds'), m(MirrorMetric.FILES_WALKED, 'files walked')],
        right: [m(MirrorMetric.ORIGIN_OPS, 'origin requests')] }),
      new cloudwatch.GraphWidget({ title: 'Mirrors: bytes held and out of space', width: 8,
        left: [m(MirrorMetric.BYTES, 'bytes')], right: [m(MirrorMetric.FULL, 'out of space')] }),
    );
    this.alarm('MirrorSyncFailing', f.metricMirror(MirrorMetric.SYNC_FAILURES, { period: Duration.minutes(5) }), {
      threshold: 1,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `Syncs of the mirrors of ${f.node.path} failed for 15 minutes: nodes serve their last copy, which grows older.`,
    });
    this.alarm('MirrorFull', f.metricMirror(MirrorMetric.FULL, { period: Duration.minutes(5) }), {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `A mirrored tree of ${f.node.path} no longer fits the nodes' mirroring.size: they serve the last copy that fit.`,
    });
  }

  private alarm(id: string, metric: cloudwatch.IMetric, props: Omit<cloudwatch.CreateAlarmOptions, 'alarmName'>): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, { metric, ...props });
    this.notify(alarm);
    this.alarms.push(alarm);
    return alarm;
  }

  /**
   * Sends the alarm's ALARM and OK transitions to `alarmTopic`, when there is one. Without one the alarm has no
   * action, which the compliance packs' `CloudWatchAlarmAction` reports: acknowledged on the alarm with that reason,
   * so a stack that follows the quick start passes them and the report still says why.
   */
  private notify(alarm: cloudwatch.AlarmBase): void {
    if (!this.props.alarmTopic) {
      acknowledgeCompliance(alarm, 'CloudWatchAlarmAction', 'No alarmTopic was given to the dashboard: the alarm ' +
        'shows its state on the dashboard and in the CloudWatch console and notifies no one. Pass alarmTopic (an SNS ' +
        'topic) to give every alarm of the dashboard ALARM and OK actions.');
      return;
    }
    alarm.addAlarmAction(new cwactions.SnsAction(this.props.alarmTopic));
    alarm.addOkAction(new cwactions.SnsAction(this.props.alarmTopic));
  }

  private meteredPerSecond(): cloudwatch.IMetric {
    return new cloudwatch.MathExpression({
      expression: 'm / 60',
      usingMetrics: { m: this.props.originFileSystem.metricMeteredIoBytes() },
      label: 'metered (MeteredIOBytes / 60 s)',
      period: Duration.minutes(1),
    });
  }
}

/** Throws `Invalid <prop>` for thresholds out of range. */
export function validateDashboardOptions(scope: IConstruct, o: CacheDashboardOptions): void {
  for (const [name, v] of [['percentIoLimitThreshold', o.percentIoLimitThreshold], ['throughputUtilizationThreshold', o.throughputUtilizationThreshold]] as const) {
    knownAtSynth(scope, name, v);
    if (v !== undefined && !(v > 0 && v <= 100)) throw propError(scope, name, `is a percentage, more than 0 and at most 100, got ${v}.`);
  }
  knownAtSynth(scope, 'burstCreditBalanceThreshold', o.burstCreditBalanceThreshold);
  if (o.burstCreditBalanceThreshold && o.burstCreditBalanceThreshold.toBytes({ rounding: SizeRoundingBehavior.NONE }) <= 0) {
    throw propError(scope, 'burstCreditBalanceThreshold', 'must be more than 0 bytes.');
  }
}

/** A widget whose content is decided when the dashboard renders (at synthesis), not when it is added. */
class RenderedLater implements cloudwatch.IWidget {
  private x?: number;
  private y?: number;
  constructor(public readonly width: number, public readonly height: number, private readonly build: () => cloudwatch.IWidget) {}
  public position(x: number, y: number): void {
    this.x = x;
    this.y = y;
  }
  public toJson(): any[] {
    const widget = this.build();
    if (this.x !== undefined && this.y !== undefined) widget.position(this.x, this.y);
    return widget.toJson();
  }
}
