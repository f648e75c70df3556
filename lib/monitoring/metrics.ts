// The metrics of every tier, in one module: each tier owns its own (the instances' namespace and the Auto Scaling
// group's in lib/instance/, the disk cache's in lib/fscache/, the nodes' and the mirrors' in lib/cache-fleet/); the
// dashboard's alarms, the tests and the lab read them here.
export { METRIC_NAMESPACE, InstanceMetric, NodeGroupMetric, autoScalingGroupMetric, groupMetric, instanceMetrics, sumOfMetrics } from '../instance/metrics';
export { DISK_CACHE_METRICS, DiskCacheMetric, NOT_SERVING, diskCacheMetric, notServing, notServingExpression } from '../fscache/metrics';
export { MirrorMetric, NODE_GROUP_METRICS, NODE_METRICS, namedMetric } from '../cache-fleet/metrics';
export { CLIENT_METRICS } from '../client/metrics';
