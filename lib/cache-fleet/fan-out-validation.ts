import { Stack, Token } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { IConstruct } from 'constructs';
import { knownAtSynth, propError } from '../private/errors';
import { normalName } from './fan-out-names';
import { NetworkLoadBalancerFanOutOptions, ROUTE53_FAN_OUT_DEFAULTS, Route53FanOutOptions } from './fan-out-options';

const LABEL_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Zones a private hosted zone of the fleet's must not be, nor be under: on every instance of the VPC it would answer
 * for AWS's service endpoints (S3, SSM, CloudFormation...: the nodes could no longer boot) or for the VPC's own host
 * names (`ip-10-0-0-1.ec2.internal`, `ip-10-0-0-1.<region>.compute.internal`).
 */
const SHADOWED_ZONES = [
  { zone: 'amazonaws.com', what: 'AWS\'s service endpoints (S3, SSM, CloudFormation...), which the nodes need to boot' },
  { zone: 'amazonaws.com.cn', what: 'AWS\'s service endpoints in China (S3, SSM, CloudFormation...), which the nodes need to boot' },
  { zone: 'api.aws', what: 'AWS\'s dual-stack service endpoints' },
  { zone: 'ec2.internal', what: 'the VPC\'s own host names in us-east-1 (ip-10-0-0-1.ec2.internal)' },
  { zone: 'compute.internal', what: 'the VPC\'s own host names (ip-10-0-0-1.<region>.compute.internal)' },
];

/** DNS's longest name, in characters without the trailing dot (RFC 1035: 255 octets on the wire). */
const DNS_NAME_MAX = 253;

/** Throws `Invalid <prop>.<option>` for Route 53 options that contradict each other or that Route 53 refuses. */
export function validateRoute53(scope: IConstruct, prop: string, o: Route53FanOutOptions): void {
  if (o.hostedZone && o.zoneName !== undefined) {
    throw propError(scope, `${prop}.zoneName`, 'names a new hosted zone, but hostedZone gives an existing one. Remove one of them.');
  }
  if (o.zoneName !== undefined && !Token.isUnresolved(o.zoneName)) {
    const labels = o.zoneName.replace(/\.$/, '').split('.');
    if (labels.length < 2 || !labels.every((l) => LABEL_RE.test(l))) {
      throw propError(scope, `${prop}.zoneName`, `'${o.zoneName}' is not a valid DNS zone name (lower-case labels, at least two).`);
    }
    const name = normalName(o.zoneName);
    if (name.length > DNS_NAME_MAX) {
      throw propError(scope, `${prop}.zoneName`, `is ${name.length} characters, over DNS's ${DNS_NAME_MAX} (Route 53 refuses ` +
        'the zone at deploy time). Give a shorter zoneName.');
    }
    const shadowed = SHADOWED_ZONES.find((z) => name === z.zone || name.endsWith(`.${z.zone}`));
    if (shadowed) {
      throw propError(scope, `${prop}.zoneName`, `'${o.zoneName}'${name === shadowed.zone ? '' : ` is under ${shadowed.zone}`}: a ` +
        `private hosted zone of that name would answer, for every instance of the VPC, for ${shadowed.what}. Give a name ` +
        `of your own, such as '${ROUTE53_FAN_OUT_DEFAULTS.zoneName}' (the default) or 'efs-cache.example.internal'.`);
    }
  }
  if (o.recordName !== undefined && !Token.isUnresolved(o.recordName) && !o.recordName.split('.').every((l) => LABEL_RE.test(l))) {
    throw propError(scope, `${prop}.recordName`, `'${o.recordName}' is not a valid DNS name relative to the zone.`);
  }
  knownAtSynth(scope, `${prop}.recordTtl`, o.recordTtl);
  if (o.recordTtl && !Number.isInteger(o.recordTtl.toSeconds({ integral: false }))) {
    throw propError(scope, `${prop}.recordTtl`, 'must be whole seconds (a DNS TTL is a number of seconds), got ' +
      `${o.recordTtl.toSeconds({ integral: false })} seconds.`);
  }
  if (o.recordTtl && (o.recordTtl.toSeconds() < 0 || o.recordTtl.toSeconds() > 86400)) {
    throw propError(scope, `${prop}.recordTtl`, `must be between 0 seconds and 1 day, got ${o.recordTtl.toHumanString()}.`);
  }
}

/** The longest name of an Availability Zone (`us-gov-west-1-lax-1a`: Local Zones), for an AZ known only at deploy time. */
export const AZ_NAME_MAX = 21;

/**
 * Throws `Invalid fanOut.<option>` when the longest name the fan-out records (`node<N>.<recordName>.<zone>`, or
 * `<az>.<recordName>.<zone>`, an AZ known only at deploy time counted at its longest) is over DNS's 253 characters,
 * which Route 53 refuses at deploy time.
 */
export function checkRecordNameLengths(scope: IConstruct, zoneGiven: boolean, names: Array<{ name: string; extra?: number }>): void {
  const measured = names.filter((n) => !Token.isUnresolved(n.name))
    .map((n) => ({ name: normalName(n.name), length: normalName(n.name).length + (n.extra ?? 0) }))
    .sort((a, b) => b.length - a.length);
  const longest = measured[0];
  if (longest === undefined || longest.length <= DNS_NAME_MAX) return;
  throw propError(scope, `fanOut.${zoneGiven ? 'zoneName' : 'recordName'}`, `makes the record '${longest.name}', ` +
    `${longest.length} characters: over DNS's ${DNS_NAME_MAX}, which Route 53 refuses at deploy time. Shorten ` +
    `${zoneGiven ? 'zoneName or recordName' : 'recordName'} by ${longest.length - DNS_NAME_MAX} characters or more.`);
}

/** Throws `Invalid <prop>.<option>` for load balancer options that Elastic Load Balancing refuses. */
export function validateNetworkLoadBalancer(scope: IConstruct, prop: string, o: NetworkLoadBalancerFanOutOptions): void {
  const logs = o.accessLogs;
  if (logs && !logs.bucket) {
    // From JavaScript, which has no types.
    throw propError(scope, `${prop}.accessLogs.bucket`, 'is required: the bucket the access logs go to.');
  }
  // The bucket's policy lets the log delivery write only under the prefix, in a resource pattern where IAM reads * and
  // ? as wildcards: no deploy-time value may bring them in.
  knownAtSynth(scope, `${prop}.accessLogs.prefix`, logs?.prefix, 'the bucket policy lets the log delivery write only under it');
  if (logs?.prefix !== undefined && (/^\/|\/$/.test(logs.prefix) || /AWSLogs/.test(logs.prefix))) {
    throw propError(scope, `${prop}.accessLogs.prefix`, `'${logs.prefix}' cannot start or end with / nor contain AWSLogs ` +
      '(Elastic Load Balancing adds /AWSLogs/<account>/ after it). Use a prefix such as \'efs-cache\'.');
  }
  if (logs) validateAccessLogsBucket(scope, `${prop}.accessLogs.bucket`, logs.bucket);
  knownAtSynth(scope, `${prop}.idleTimeout`, o.idleTimeout);
  if (o.idleTimeout && !Number.isInteger(o.idleTimeout.toSeconds({ integral: false }))) {
    throw propError(scope, `${prop}.idleTimeout`, `must be whole seconds (Elastic Load Balancing takes a number of seconds), ` +
      `got ${o.idleTimeout.toSeconds({ integral: false })} seconds.`);
  }
  if (o.idleTimeout && (o.idleTimeout.toSeconds() < 60 || o.idleTimeout.toSeconds() > 6000)) {
    throw propError(scope, `${prop}.idleTimeout`, `must be between 60 and 6000 seconds, got ${o.idleTimeout.toSeconds()}.`);
  }
}

/**
 * Throws `Invalid <prop>` for an access-log bucket Elastic Load Balancing cannot write to: one in another region than
 * the load balancer (when both are known at synth), or one encrypted with the AWS managed key `aws/s3`, whose policy
 * no one can change to let the log delivery service use it.
 */
function validateAccessLogsBucket(scope: IConstruct, prop: string, bucket: s3.IBucket): void {
  const here = Stack.of(scope).region;
  const there = bucket.env.region;
  if (!Token.isUnresolved(here) && !Token.isUnresolved(there) && here !== there) {
    throw propError(scope, prop, `is in ${there}, the load balancer in ${here}: Elastic Load Balancing writes access logs ` +
      `only to a bucket of its own region, and refuses the attribute at deploy time. Give a bucket in ${here}.`);
  }
  if (bucketEncryption(bucket).awsManaged) {
    throw propError(scope, prop, 'is encrypted with the AWS managed key aws/s3 (BucketEncryption.KMS_MANAGED or ' +
      'DSSE_MANAGED), which the log delivery service cannot use: no access log would be written. Give the bucket ' +
      'BucketEncryption.S3_MANAGED, or BucketEncryption.KMS with a key of your own (its policy is granted to the log delivery).');
  }
}

/**
 * What synth can tell of a bucket's default encryption: `awsManaged` for SSE-KMS with the AWS managed key `aws/s3`
 * (a bucket of the app with `BucketEncryption.KMS_MANAGED` or `DSSE_MANAGED`), `key` for a customer managed key (its
 * `encryptionKey`, of the app or imported with the bucket). A bucket imported without a key: neither (taken as SSE-S3).
 */
export function bucketEncryption(bucket: s3.IBucket): { awsManaged: boolean; key?: kms.IKey } {
  if (bucket.encryptionKey) return { awsManaged: false, key: bucket.encryptionKey };
  const cfn = bucket.node.defaultChild;
  if (!(cfn instanceof s3.CfnBucket) || cfn.bucketEncryption === undefined) return { awsManaged: false };
  const rules: unknown = Stack.of(cfn).resolve(cfn.bucketEncryption)?.serverSideEncryptionConfiguration;
  const defaults = (Array.isArray(rules) ? rules : []).map((r) => r?.serverSideEncryptionByDefault);
  return {
    awsManaged: defaults.some((d) => typeof d?.sseAlgorithm === 'string' && d.sseAlgorithm.startsWith('aws:kms') &&
      d.kmsMasterKeyId === undefined),
  };
}
