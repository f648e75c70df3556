import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { IConstruct } from 'constructs';
import type { MirrorMetric } from '../../cache-fleet/metrics';
import type { DiskCacheMetric } from '../../fscache/metrics';

// What each segment reads of the tier it shows: only the metric methods and facts it uses, so a segment depends on
// no construct of the tiers below (each tier owns its metric*() methods), and any construct with them can be shown.

/** The metrics of an origin file system (EFS's own, namespace AWS/EFS) that the origin and headline segments read. */
export interface MonitoredOrigin {
  readonly throughputMode?: efs.ThroughputMode;
  readonly performanceMode?: efs.PerformanceMode;
  metricTotalIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricDataReadIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricDataWriteIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricMetadataIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricMeteredIoBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricPercentIoLimit(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricBurstCreditBalance(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricPermittedThroughput(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricClientConnections(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricStorageBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}

/** One cache node's metrics (EC2's and its Auto Scaling group's). */
export interface MonitoredCacheNode {
  readonly nodeNumber: number;
  metricNetworkOut(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricInService(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}

/** A cache fleet's nodes, its load balancer when it has one, and the metrics of the nodes together. */
export interface MonitoredCacheNodes {
  readonly nodes: readonly MonitoredCacheNode[];
  /** Set for an elastic fleet: its nodes are one group, shown together. */
  readonly autoScalingGroup?: IConstruct;
  readonly loadBalancer?: { readonly metrics: elbv2.INetworkLoadBalancerMetrics };
  readonly targetGroup?: { readonly metrics: elbv2.INetworkTargetGroupMetrics };
  metricNetworkOut(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric;
  metricNodesInService(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric;
  metricCpuUtilization(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric;
  metricHealthyNodes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricNfsdOps(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricNfsdRequestsQueued(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricNfsdThreads(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricPageCacheBytes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}

/** A cache fleet's mirrors' metrics. */
export interface MonitoredMirrors extends IConstruct {
  metricMirror(metric: MirrorMetric, props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}

/** A cache fleet's nodes' disk caches' metrics. */
export interface MonitoredNodeDiskCache extends IConstruct {
  metricNodeDiskCache(metric: DiskCacheMetric, props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}

/** A group of FS-Cache clients: its disk caches' metrics and the culling limit its alarm compares with. */
export interface MonitoredClients extends IConstruct {
  readonly cullLimits: { readonly blocksCull?: number };
  metricDiskCache(metric: DiskCacheMetric, props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
  metricCacheDiskFreePercent(props?: cloudwatch.MetricOptions): cloudwatch.IMetric;
}
