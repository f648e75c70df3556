import { Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { wholeGib } from '../private/errors';
import { checkImageArchitecture, checkImageOs, rootVolumeSizeFor } from './image';
import { checkInstanceTypeName, warnIfDefaultTypeNotOffered } from './instance-types';
import { checkKernel, instanceImage } from './kernel';
import { CommonInstanceOptions } from './options';
import { encryptedRootVolume } from './volumes';

/** What a construct's defaults table gives for the `CommonInstanceOptions` its props leave out. */
export interface InstanceDefaults {
  /** The instance type's name. */
  readonly instanceType: string;
  /** The root volume's size, unless the image needs a larger one. */
  readonly rootVolumeSize: Size;
}

/** `CommonInstanceOptions` checked and applied: what a launch template or an instance is made of. */
export interface ResolvedInstance {
  /** The instance type given, or the construct's default. */
  readonly instanceType: ec2.InstanceType;
  /** `machineImage`, or Amazon Linux 2023 of the kernel line for the type's architecture. */
  readonly machineImage: ec2.IMachineImage;
  /** The encrypted gp3 root volume: `rootVolumeSize`, or the default, never smaller than the image's root device. */
  readonly rootVolume: ec2.BlockDevice;
  /** Refuses a given image whose OS, once the launch template or instance knows it, is not one the library runs on. */
  checkOs(osType: ec2.OperatingSystemType | undefined): void;
}

/**
 * Checks `CommonInstanceOptions` and applies them with a construct's `defaults`: the one resolution of the instance
 * type, image, kernel line and root volume that every construct that launches instances uses.
 */
export function resolveInstance(scope: Construct, o: CommonInstanceOptions, defaults: InstanceDefaults): ResolvedInstance {
  checkInstanceTypeName(scope, o.instanceType);
  const instanceType = o.instanceType ?? new ec2.InstanceType(defaults.instanceType);
  warnIfDefaultTypeNotOffered(scope, defaults.instanceType, o.instanceType);
  wholeGib(scope, 'rootVolumeSize', o.rootVolumeSize, 8, 16384);
  checkImageArchitecture(scope, o.machineImage, instanceType);
  checkKernel(scope, o);
  return {
    instanceType,
    machineImage: instanceImage(scope, o, instanceType),
    rootVolume: encryptedRootVolume(rootVolumeSizeFor(scope, o.machineImage, o.rootVolumeSize, defaults.rootVolumeSize)),
    checkOs: (osType) => checkImageOs(scope, o.machineImage, osType),
  };
}
