import { Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct, IConstruct } from 'constructs';
// The dashboard reads the tiers through their metric methods and the metric table: the tiers' modules are imported
// for their types only, so the dashboard is a leaf of the module graph (the tiers never import it back).
import type { CacheFleet } from '../cache-fleet/cache-fleet';
import type { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import type { OriginFileSystem } from '../origin/origin-file-system';
import { describeValue, knownAtSynth, propError } from '../private/errors';
import { REMOVED_DASHBOARD_PROPS, refuseRemovedProps } from '../private/removed-props';
import { CACHE_DASHBOARD_DEFAULTS } from './dashboard-defaults';
import { cacheNodesSegment } from './segments/cache-nodes';
import { clientsSegment } from './segments/clients';
import { headlineSegment } from './segments/headline';
import { mirrorsSegment } from './segments/mirrors';
import { nodeDiskCacheSegment } from './segments/node-disk-cache';
import { originSegment } from './segments/origin';
import { DashboardAlarms, DashboardSegment } from './segments/segment';

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

  /**
   * Price per GB read from EFS with Elastic throughput, in US dollars, for the dashboard's figure of read charges avoided.
   * The default is us-east-1's price as published in June 2026 (read 2026-12-07); give your region's, as a literal.
   *
   * @default 0.03
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/sizing-and-cost.md
   */
  readonly efsReadPricePerGb?: number;
}

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
  public readonly alarms: cloudwatch.Alarm[];
  /** Composite alarms: "no healthy cache node" over a Route 53 fleet of more than 10 nodes. */
  public readonly compositeAlarms: cloudwatch.CompositeAlarm[];
  private readonly registry: DashboardAlarms;
  private readonly props: CacheDashboardProps;
  private readonly clientServed: cloudwatch.IMetric[] = [];

  constructor(scope: Construct, id: string, props: CacheDashboardProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_DASHBOARD_PROPS);
    validateDashboardOptions(this, props);
    this.props = props;
    this.registry = new DashboardAlarms(this, props.alarmTopic);
    this.alarms = this.registry.alarms;
    this.compositeAlarms = this.registry.compositeAlarms;
    const o = props.originFileSystem;
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      dashboardName: props.dashboardName,
      defaultInterval: CACHE_DASHBOARD_DEFAULTS.display.defaultInterval,
    });

    const d = CACHE_DASHBOARD_DEFAULTS;
    const origin = originSegment(o, {
      percentIoLimit: props.percentIoLimitThreshold ?? d.percentIoLimitThreshold,
      throughputUtilization: props.throughputUtilizationThreshold ?? d.throughputUtilizationThreshold,
      burstCreditBalance: props.burstCreditBalanceThreshold ?? d.burstCreditBalanceThreshold,
    });
    const f = props.cacheFleet;
    const nodes = f ? cacheNodesSegment(f) : undefined;
    const diskCache = f?.nodeDiskCache._enabled ? nodeDiskCacheSegment(f) : undefined;
    const mirrors = f && f.mirrorExports.length > 0 ? mirrorsSegment(f) : undefined;
    const price = props.efsReadPricePerGb ?? d.efsReadPricePerGb;
    const segments = [headlineSegment(o, () => this.served(), price), origin, nodes, diskCache, mirrors];
    for (const segment of segments) if (segment) this.addSegment(segment, false);
    // Alarms in the order the templates have always listed them: the nodes' health last.
    for (const segment of [origin, diskCache, mirrors, nodes]) segment?.addAlarms(this.registry);
  }

  /**
   * The alarm of this dashboard named `name` in the alarm table of docs/operations.md: `MirrorFull`, `CacheNotServing1`.
   * `NoHealthyCacheNode` is a composite alarm on a Route 53 fleet of more than 10 nodes; an unknown name throws.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   */
  public alarm(name: string): cloudwatch.IAlarm {
    const found = this.registry.named(name);
    if (!found) {
      throw new Error(`cdk-efs-cache: ${this.node.path} has no alarm named '${name}'; its alarms are ${this.registry.names().join(', ')}.`);
    }
    return found;
  }

  /**
   * Adds a group of FS-Cache clients: widgets of their disk caches, and alarms when culling stalls or caches stop
   * serving.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   */
  public addClients(clients: FsCacheClientLaunchTemplate): void {
    const segment = clientsSegment(clients, this.clientServed.length + 1);
    this.clientServed.push(segment.served);
    this.addSegment(segment, true);
  }

  /** Adds a segment's rows of widgets and, with `alarms`, creates its alarms. */
  private addSegment(segment: DashboardSegment, alarms: boolean): void {
    for (const row of segment.rows) this.dashboard.addWidgets(...row);
    if (alarms) segment.addAlarms(this.registry);
  }

  /** What the cache tiers served: the nodes' nfsd reads and each client group's disk cache reads. */
  private served(): cloudwatch.IMetric[] {
    const f = this.props.cacheFleet;
    return [...(f ? [f.metricNfsdBytesRead({ label: 'served by cache nodes (nfsd reads)' })] : []), ...this.clientServed];
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
  // The price lands in the dashboard's JSON body, inside a metric math expression and a title: a literal only.
  const price = o.efsReadPricePerGb;
  knownAtSynth(scope, 'efsReadPricePerGb', price, 'it is written into the dashboard\'s metric math');
  if (price !== undefined && !(typeof price === 'number' && Number.isFinite(price) && price >= 0)) {
    throw propError(scope, 'efsReadPricePerGb', `is a price in US dollars per GB, a finite number of at least 0, got ${describeValue(price)}.`);
  }
}
