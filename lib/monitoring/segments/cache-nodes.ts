import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import type { MonitoredCacheNodes } from './monitored';
import { DashboardAlarms, DashboardSegment } from './segment';

/** CloudWatch refuses alarms whose math expression uses more metrics than this. */
const MAX_ALARM_METRICS = 10;

/**
 * The cache nodes of a fleet: NetworkOut and CPU (per node, or over an elastic fleet's group), nfsd operations,
 * queued requests, threads and page cache, healthy nodes, and the NLB's hosts, bytes and flows (NLB mode); the alarm
 * `NoHealthyCacheNode`.
 */
export function cacheNodesSegment(f: MonitoredCacheNodes): DashboardSegment {
  const perNode = f.nodes.map((n) => n.metricNetworkOut({ label: `node ${n.nodeNumber}` }));
  const rows: cloudwatch.IWidget[][] = [
    [
      f.autoScalingGroup
        ? new cloudwatch.GraphWidget({ title: 'Cache nodes: NetworkOut in total (bytes per minute) and nodes in service', width: 12,
          left: [f.metricNetworkOut({ label: 'total' })], right: [f.metricNodesInService({ label: 'nodes in service' })], rightYAxis: { min: 0 } })
        : new cloudwatch.GraphWidget({ title: 'Cache nodes: NetworkOut per node and total (bytes per minute)', width: 12,
          left: [...perNode, f.metricNetworkOut({ label: 'total' })] }),
      new cloudwatch.GraphWidget({ title: 'Cache nodes: CPU (%)', width: 12, left: f.autoScalingGroup
        ? [f.metricCpuUtilization({ label: 'average over the nodes' })]
        : f.nodes.map((n) => n.metricCpuUtilization({ label: `node ${n.nodeNumber}` })) }),
    ],
    [
      new cloudwatch.GraphWidget({ title: 'Cache nodes: NFS operations and queued requests', width: 8,
        left: [f.metricNfsdOps()], right: [f.metricNfsdRequestsQueued()] }),
      new cloudwatch.GraphWidget({ title: 'Cache nodes: page cache (bytes) and nfsd threads', width: 8,
        left: [f.metricPageCacheBytes()], right: [f.metricNfsdThreads()] }),
      new cloudwatch.GraphWidget({ title: 'Cache nodes: healthy', width: 8, left: [f.metricHealthyNodes()], leftYAxis: { min: 0 } }),
    ],
  ];
  const lb = f.loadBalancer;
  if (lb) {
    rows.push([
      new cloudwatch.GraphWidget({ title: 'NLB: healthy hosts', width: 8, left: [f.targetGroup!.metrics.healthyHostCount()] }),
      new cloudwatch.GraphWidget({ title: 'NLB: processed bytes', width: 8, left: [lb.metrics.processedBytes()] }),
      new cloudwatch.GraphWidget({ title: 'NLB: active flows', width: 8, left: [lb.metrics.activeFlowCount()] }),
    ]);
  }
  return {
    rows,
    addAlarms: (alarms) => addNoHealthyCacheNodeAlarm(alarms, f),
  };
}

/**
 * The alarm `NoHealthyCacheNode`: one alarm on the healthy nodes, or, for more nodes than an alarm's math takes, one
 * input alarm per 10 nodes and a composite alarm over them.
 */
function addNoHealthyCacheNodeAlarm(alarms: DashboardAlarms, f: MonitoredCacheNodes): void {
  const s = CACHE_DASHBOARD_DEFAULTS.alarms.noHealthyCacheNode;
  const noHealthy = {
    threshold: s.threshold,
    evaluationPeriods: s.evaluationPeriods,
    comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.BREACHING,
  };
  const description = 'No cache node is healthy: clients of the cache fleet cannot read.';
  if (f.targetGroup || f.nodes.length <= MAX_ALARM_METRICS) {
    alarms.alarm('NoHealthyCacheNode', f.metricHealthyNodes(), { ...noHealthy, alarmDescription: description });
    return;
  }
  // An alarm's math expression takes at most 10 metrics and each node is a group of its own: one alarm per 10
  // nodes ("none of these is in service"), and a composite alarm, with the actions, when all of them are.
  const inputs: cloudwatch.Alarm[] = [];
  for (let start = 0; start < f.nodes.length; start += MAX_ALARM_METRICS) {
    const nodes = f.nodes.map((_n, i) => i).slice(start, start + MAX_ALARM_METRICS);
    const usingMetrics: Record<string, cloudwatch.IMetric> = {};
    for (const i of nodes) usingMetrics[`n${i}`] = f.nodes[i].metricInService();
    const range = `${nodes[0] + 1} to ${nodes[nodes.length - 1] + 1}`;
    inputs.push(alarms.input(`NoNodeInService${start / MAX_ALARM_METRICS + 1}`, new cloudwatch.MathExpression({
      expression: Object.keys(usingMetrics).join(' + '), usingMetrics, period: s.period,
      label: `Cache nodes ${range} in service`,
    }), {
      ...noHealthy,
      alarmDescription: `None of cache nodes ${range} is in service (an input of the NoHealthyCacheNode composite alarm, which notifies).`,
    }, 'An input of a composite alarm; the composite alarm has the actions, so the outage notifies once.'));
  }
  alarms.allOf('NoHealthyCacheNode', inputs, description);
}
