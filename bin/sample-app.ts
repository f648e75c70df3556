#!/usr/bin/env node
/**
 * The sample app: a VPC and a CachedFileSystem, for `cdk deploy`. Environment-agnostic and lookup-free, so it
 * synthesizes with no AWS account.
 */
import { App } from 'aws-cdk-lib';
import { SampleStack } from './sample-stack';

const app = new App();
new SampleStack(app, 'EfsCacheSample', {
  description: 'cdk-efs-cache sample: EFS with a RAM cache tier and FS-Cache clients',
});
app.synth();
