import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SampleStack } from '../bin/sample-stack';
import { nagFindings, newApp, stripVolatile } from './util';

describe('the sample stack', () => {
  test('matches its snapshot (volatile values stripped)', () => {
    const app = newApp();
    const stack = new SampleStack(app, 'EfsCacheSample');
    expect(stripVolatile(Template.fromStack(stack).toJSON())).toMatchSnapshot();
  });

  test('has no 0.0.0.0/0 ingress and opens only TCP 2049 between peers', () => {
    const app = newApp();
    const stack = new SampleStack(app, 'EfsCacheSample');
    const t = Template.fromStack(stack).toJSON();
    const rules: Array<Record<string, unknown>> = [];
    for (const r of Object.values<any>(t.Resources)) {
      if (r.Type === 'AWS::EC2::SecurityGroupIngress') rules.push(r.Properties);
      if (r.Type === 'AWS::EC2::SecurityGroup') rules.push(...(r.Properties.SecurityGroupIngress ?? []));
    }
    for (const rule of rules) {
      expect(rule.CidrIp).not.toBe('0.0.0.0/0');
      expect(rule.CidrIpv6).not.toBe('::/0');
      expect(rule).toMatchObject({ IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 });
    }
  });

  test('the cdk-nag helper sees findings, also in an app that was synthesized before', () => {
    const app = newApp();
    const stack = new Stack(app, 'Bare');
    new sns.Topic(stack, 'Topic');
    Template.fromStack(stack);
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual(expect.arrayContaining([
      'AwsSolutions-SNS3 @ Bare/Topic/Resource',
      'NIST.800.53.R5-SNSEncryptedKMS @ Bare/Topic/Resource',
    ]));
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 report no unacknowledged finding', () => {
    const app = newApp();
    new SampleStack(app, 'EfsCacheSample');
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});
