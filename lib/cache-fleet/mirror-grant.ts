import * as iam from 'aws-cdk-lib/aws-iam';
import { grantReadPrefix } from '../private/s3-grant';
import { MirrorOptions, s3Mirrors } from './mirror';

/**
 * Lets `role` (the nodes') read each S3 mirror: `s3:ListBucket` on its bucket with an `s3:prefix` condition for its
 * prefix (none for the whole bucket), `s3:GetObject` on `<prefix>*`, and decrypt with the bucket's key if it has one;
 * nothing else. The objects' wildcard is acknowledged to cdk-nag: their keys are not known at synth.
 */
export function grantS3Mirrors(role: iam.IRole, o: MirrorOptions): void {
  for (const m of s3Mirrors(o)) {
    grantReadPrefix(role, m.bucket, m.prefix,
      // The reason is in the template (the cdk-nag acknowledgement): its wording, `mirrorSources` included, is part of every deployed template.
      'The nodes copy every object under the S3 mirror\'s prefix (mirrorSources); their keys are not known at synth time.');
  }
}
