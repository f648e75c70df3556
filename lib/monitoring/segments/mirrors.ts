import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { MirrorMetric } from '../../cache-fleet/metrics';
import { alarmSpan, CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import type { MonitoredMirrors } from './monitored';
import { DashboardSegment } from './segment';

/**
 * The mirrors of a fleet (`mirrors`): age of the copies, the syncs' own cost (seconds, files walked, origin
 * requests), failures and space; alarms `MirrorSyncFailing` when syncs keep failing (clients see an older copy) and
 * `MirrorFull` when a tree no longer fits the nodes' `mirroring.size`.
 */
export function mirrorsSegment(f: MonitoredMirrors): DashboardSegment {
  const m = (name: MirrorMetric, label: string) => f.metricMirror(name, { label });
  const a = CACHE_DASHBOARD_DEFAULTS.alarms;
  return {
    rows: [[
      new cloudwatch.GraphWidget({ title: 'Mirrors: age of the oldest copy (s) and failed syncs', width: 8,
        left: [m(MirrorMetric.AGE_SECONDS, 'age (s)')], right: [m(MirrorMetric.SYNC_FAILURES, 'failed syncs')] }),
      new cloudwatch.GraphWidget({ title: 'Mirrors: sync cost (seconds, files walked, origin requests)', width: 8,
        left: [m(MirrorMetric.SYNC_SECONDS, 'seconds'), m(MirrorMetric.FILES_WALKED, 'files walked')],
        right: [m(MirrorMetric.ORIGIN_OPS, 'origin requests')] }),
      new cloudwatch.GraphWidget({ title: 'Mirrors: bytes held and out of space', width: 8,
        left: [m(MirrorMetric.BYTES, 'bytes')], right: [m(MirrorMetric.FULL, 'out of space')] }),
    ]],
    addAlarms: (alarms) => {
      alarms.alarm('MirrorSyncFailing', f.metricMirror(MirrorMetric.SYNC_FAILURES, { period: a.mirrorSyncFailing.period }), {
        threshold: a.mirrorSyncFailing.threshold,
        evaluationPeriods: a.mirrorSyncFailing.evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `Syncs of the mirrors of ${f.node.path} failed for ${alarmSpan(a.mirrorSyncFailing)}: ` +
          'nodes serve their last copy, which grows older.',
      });
      alarms.alarm('MirrorFull', f.metricMirror(MirrorMetric.FULL, { period: a.mirrorFull.period }), {
        threshold: a.mirrorFull.threshold,
        evaluationPeriods: a.mirrorFull.evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `A mirrored tree of ${f.node.path} no longer fits the nodes' mirroring.size: they serve the last copy that fit.`,
      });
    },
  };
}
