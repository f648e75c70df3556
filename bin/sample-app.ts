#!/usr/bin/env node
/**
 * The sample app: a VPC and a CachedFileSystem, for `cdk deploy`. Environment-agnostic and lookup-free, so it
 * synthesizes with no AWS account. Its instances are of the trial size unless the context value `size` says
 * otherwise: `npx cdk deploy -c size=production` for the library's default types (see `SampleSize`; the hourly cost
 * of each size is in docs/sizing-and-cost.md#prices).
 */
import { App } from 'aws-cdk-lib';
import { sampleSize, SampleStack } from './sample-stack';

const app = new App();
new SampleStack(app, 'EfsCacheSample', {
  description: 'cdk-efs-cache sample: EFS with a RAM cache tier and FS-Cache clients',
  // The one context value the app reads (lib/ reads none): 'trial' (the default) or 'production'.
  size: sampleSize(app.node.tryGetContext('size')),
});
app.synth();
