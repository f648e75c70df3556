import * as iam from 'aws-cdk-lib/aws-iam';
import { METRIC_NAMESPACE } from './metrics';

/**
 * Lets an instance role publish the instances' metrics: `cloudwatch:PutMetricData` in the namespace CdkEfsCache only
 * (the CloudWatch agent needs nothing else for StatsD metrics). PutMetricData supports no resource scoping, so its
 * resource is `*`: the caller acknowledges AwsSolutions-IAM5 with `PUT_METRIC_DATA_REASON`.
 */
export function grantPutMetricData(role: iam.IRole): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['cloudwatch:PutMetricData'],
    resources: ['*'],
    conditions: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } },
  }));
}

/** Why PutMetricData's `*` is acceptable (AwsSolutions-IAM5 acknowledgements). */
export const PUT_METRIC_DATA_REASON = 'cloudwatch:PutMetricData supports no resource-level permissions; the statement ' +
  `is limited by condition to the namespace ${METRIC_NAMESPACE}.`;
