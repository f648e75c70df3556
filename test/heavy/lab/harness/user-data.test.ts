import { CfnTemplate, resolveIntrinsics, resolveUserData, UnresolvedIntrinsicError, userDataResources } from './user-data';

const template: CfnTemplate = {
  Parameters: {
    Threads: { Type: 'Number', Default: 32 },
    AmiId: { Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>', Default: '/aws/service/ami-amazon-linux-latest/x' },
  },
  Mappings: { Tags: { Cache: { Value: 'efscache' } } },
  Conditions: { InUsEast1: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] } },
  Resources: {
    FileSystemABC123: { Type: 'AWS::EFS::FileSystem' },
    ClientTemplate1234: {
      Type: 'AWS::EC2::LaunchTemplate',
      Properties: {
        LaunchTemplateData: {
          UserData: {
            'Fn::Base64': {
              'Fn::Join': [
                '',
                [
                  "#!/bin/bash\nexport EFSC_NFS_SERVER='",
                  { Ref: 'FileSystemABC123' },
                  '.efs.',
                  { Ref: 'AWS::Region' },
                  '.',
                  { Ref: 'AWS::URLSuffix' },
                  "'\nexport EFSC_NODE='",
                  { 'Fn::GetAtt': ['Eni123', 'PrimaryPrivateIpAddress'] },
                  "'\nexport EFSC_AZ='",
                  { 'Fn::Select': [1, { 'Fn::GetAZs': '' }] },
                  "'\nexport EFSC_THREADS='",
                  { Ref: 'Threads' },
                  "'\nexport EFSC_CACHE_TAG='",
                  { 'Fn::FindInMap': ['Tags', 'Cache', 'Value'] },
                  "'\nexport EFSC_EAST='",
                  { 'Fn::If': ['InUsEast1', 'yes', 'no'] },
                  "'\n",
                ],
              ],
            },
          },
        },
      },
    },
    Node: {
      Type: 'AWS::EC2::Instance',
      Properties: { UserData: { 'Fn::Base64': { 'Fn::Sub': '#!/bin/bash\necho ${Eni123.PrimaryPrivateIpAddress} ${!HOME} ${AWS::Region}\n' } } },
    },
    Plain: { Type: 'AWS::EC2::Instance', Properties: { UserData: Buffer.from('#!/bin/bash\ntrue\n').toString('base64') } },
  },
};

const values = {
  'Ref:FileSystemABC123': 'fs-0123456789abcdef0',
  'Fn::GetAtt:Eni123.PrimaryPrivateIpAddress': '10.77.0.21',
  'Fn::GetAZs': ['us-east-1a', 'us-east-1b'],
  'AWS::Region': 'us-east-1',
  'AWS::URLSuffix': 'amazonaws.com',
};

describe('resolveUserData', () => {
  test('resolves a launch template user-data to the plain script', () => {
    expect(resolveUserData(template, 'ClientTemplate1234', values)).toBe(
      [
        '#!/bin/bash',
        "export EFSC_NFS_SERVER='fs-0123456789abcdef0.efs.us-east-1.amazonaws.com'",
        "export EFSC_NODE='10.77.0.21'",
        "export EFSC_AZ='us-east-1b'",
        "export EFSC_THREADS='32'",
        "export EFSC_CACHE_TAG='efscache'",
        "export EFSC_EAST='yes'",
        '',
      ].join('\n'),
    );
  });

  test('resolves Fn::Sub on an instance, keeping ${!literal} escapes', () => {
    expect(resolveUserData(template, 'Node', values)).toBe('#!/bin/bash\necho 10.77.0.21 ${HOME} us-east-1\n');
  });

  test('decodes a user-data that is already base64', () => {
    expect(resolveUserData(template, 'Plain')).toBe('#!/bin/bash\ntrue\n');
  });

  test('names every intrinsic it cannot resolve', () => {
    const attempt = () => resolveUserData(template, 'ClientTemplate1234', { 'AWS::Region': 'eu-west-1' });
    expect(attempt).toThrow(UnresolvedIntrinsicError);
    expect(attempt).toThrow(/Ref:FileSystemABC123/);
    expect(attempt).toThrow(/Fn::GetAtt:Eni123\.PrimaryPrivateIpAddress/);
    expect(attempt).toThrow(/AWS::URLSuffix/);
    expect(attempt).toThrow(/Fn::GetAZs/);
  });

  test('does not take an SSM parameter default as its value', () => {
    expect(() => resolveIntrinsics({ Ref: 'AmiId' }, template)).toThrow(/Ref:AmiId \(a template parameter of type AWS::SSM/);
    expect(resolveIntrinsics({ Ref: 'AmiId' }, template, { 'Ref:AmiId': 'ami-123' })).toBe('ami-123');
  });

  test('reports unsupported functions and unknown resources clearly', () => {
    expect(() => resolveIntrinsics({ 'Fn::Cidr': ['10.0.0.0/16', 2, 8] }, template)).toThrow(/Fn::Cidr is not supported/);
    expect(() => resolveUserData(template, 'Nope', values)).toThrow(/no resource Nope.*ClientTemplate1234 \(AWS::EC2::LaunchTemplate\)/);
    expect(() => resolveUserData(template, 'FileSystemABC123', values)).toThrow(/not one of/);
  });

  test('lists the resources that carry user-data', () => {
    expect(userDataResources(template).map((r) => r.logicalId)).toEqual(['ClientTemplate1234', 'Node', 'Plain']);
  });
});
