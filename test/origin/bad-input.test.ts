import { RemovalPolicy, Size } from 'aws-cdk-lib';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as kms from 'aws-cdk-lib/aws-kms';
import {} from '../../lib';
import { BadInput, imported, origin, refusesBadInput } from '../util/bad-input';

/** What the origin file system (OriginFileSystem) refuses at synth, or warns about, each case naming the prop to change. */
const CASES: BadInput[] = [
  // OriginFileSystem
  {
    name: 'origin: DESTROY without confirmation',
    build: origin(() => ({ removalPolicy: RemovalPolicy.DESTROY })),
    error: /^Invalid removalPolicy: .*confirmDataLoss: true/,
  },
  {
    name: 'origin: SNAPSHOT',
    build: origin(() => ({ removalPolicy: RemovalPolicy.SNAPSHOT })),
    error: /^Invalid removalPolicy: EFS does not support RemovalPolicy.SNAPSHOT/,
  },
  {
    name: 'origin: confirmDataLoss without DESTROY',
    build: origin(() => ({ confirmDataLoss: true })),
    error: /^Invalid confirmDataLoss: only has a meaning with removalPolicy/,
  },
  {
    name: 'origin: Max I/O with Elastic',
    build: origin(() => ({ performanceMode: efs.PerformanceMode.MAX_IO })),
    error: /^Invalid performanceMode: Max I\/O cannot be combined with Elastic/,
  },
  {
    name: 'origin: Provisioned without a rate',
    build: origin(() => ({ throughputMode: efs.ThroughputMode.PROVISIONED })),
    error: /^Invalid provisionedThroughputPerSecond: is required/,
  },
  {
    name: 'origin: a rate without Provisioned',
    build: origin(() => ({ provisionedThroughputPerSecond: Size.mebibytes(100) })),
    error: /^Invalid provisionedThroughputPerSecond: is only valid with ThroughputMode.PROVISIONED/,
  },
  {
    name: 'origin: import with a removal policy',
    build: origin((s) => ({ fileSystem: imported(s), removalPolicy: RemovalPolicy.RETAIN })),
    error: /^Invalid removalPolicy: applies only to a file system created here, but fileSystem imports/,
  },
  {
    name: 'origin: import with a key',
    build: origin((s) => ({ fileSystem: imported(s), kmsKey: new kms.Key(s, 'K') })),
    error: /^Invalid kmsKey: applies only to a file system created here/,
  },
];

refusesBadInput('bad input to OriginFileSystem names the prop', CASES);
