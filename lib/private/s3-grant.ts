import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { acknowledgeWildcardResource } from './nag';

/**
 * Lets `role` read every object under one prefix of a bucket, and nothing else: `s3:ListBucket` on the bucket with an
 * `s3:prefix` condition for the prefix (none for the whole bucket), `s3:GetObject` on `<prefix>*`, and decrypt with
 * the bucket's key if it has one. The objects' wildcard is acknowledged to cdk-nag with `reason`: their keys are not
 * known at synth. Used by the data seeder's S3 source and the fleet's S3 mirrors.
 */
export function grantReadPrefix(role: iam.IRole, bucket: s3.IBucket, prefix: string, reason: string): void {
  const objects = bucket.arnForObjects(`${prefix}*`);
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['s3:ListBucket'],
    resources: [bucket.bucketArn],
    conditions: prefix ? { StringLike: { 's3:prefix': [`${prefix}*`] } } : undefined,
  }));
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [objects] }));
  bucket.encryptionKey?.grantDecrypt(role);
  acknowledgeWildcardResource(role, objects, reason);
}
