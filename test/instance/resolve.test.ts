import { Size } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { CacheFleet, CacheOrigin, DataSeeder, FsCacheClientLaunchTemplate, MountSource, SeedSource } from '../../lib';
import { CACHE_FLEET_DEFAULTS } from '../../lib/cache-fleet/options';
import { FS_CACHE_CLIENT_DEFAULTS } from '../../lib/client/options';
import { DATA_SEEDER_DEFAULTS } from '../../lib/seeding/data-seeder';
import { importedFs, newApp, stackWithVpc } from '../util';

/*
 * lib/instance/resolve.ts: `CommonInstanceOptions` resolved the same way by every construct that launches instances
 * (the fleet's nodes, FS-Cache clients, the data seeder), each with the defaults of its own table.
 */

type Build = (props: { instanceType?: ec2.InstanceType; machineImage?: ec2.IMachineImage; rootVolumeSize?: Size }) => Template;

const constructs: Array<[string, Build, { instanceType: string; rootVolumeSize: Size }]> = [
  ['CacheFleet', (props) => {
    const { stack, vpc } = stackWithVpc(newApp());
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props });
    return Template.fromStack(stack);
  }, CACHE_FLEET_DEFAULTS],
  ['FsCacheClientLaunchTemplate', (props) => {
    const { stack, vpc } = stackWithVpc(newApp());
    new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...props });
    return Template.fromStack(stack);
  }, FS_CACHE_CLIENT_DEFAULTS],
  ['DataSeeder', (props) => {
    const { stack, vpc } = stackWithVpc(newApp());
    new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/srv/data'), ...props });
    return Template.fromStack(stack);
  }, DATA_SEEDER_DEFAULTS],
];

/** The instance type and root volume size of the template's launch template or instance. */
function instanceOf(t: Template): { type: string; rootGiB: number } {
  const lt = Object.values(t.findResources('AWS::EC2::LaunchTemplate'))[0]?.Properties.LaunchTemplateData;
  const instance = Object.values(t.findResources('AWS::EC2::Instance'))[0]?.Properties;
  const data = lt ?? instance;
  const root = data.BlockDeviceMappings.find((b: any) => b.DeviceName === '/dev/xvda');
  return { type: data.InstanceType, rootGiB: root.Ebs.VolumeSize };
}

describe.each(constructs)('%s', (_name, build, defaults) => {
  test('its defaults table gives the instance type and root volume', () => {
    expect(instanceOf(build({}))).toEqual({ type: defaults.instanceType, rootGiB: defaults.rootVolumeSize.toGibibytes() });
  });

  test('a root volume smaller than the image\'s root device is refused at synth, as EC2 would refuse to launch it', () => {
    const machineImage = ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM);
    const props = { instanceType: new ec2.InstanceType('m7gd.xlarge'), machineImage };
    expect(() => build({ ...props, rootVolumeSize: Size.gibibytes(16) })).toThrow(/Invalid rootVolumeSize: is 16 GiB, but the image .* is built with a 30 GiB root device/);
    expect(instanceOf(build({ ...props, rootVolumeSize: Size.gibibytes(40) })).rootGiB).toBe(40);
  });
});
