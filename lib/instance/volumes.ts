import { Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';

/** An encrypted gp3 EBS volume, deleted with its instance: every volume the library's instances get. */
export function encryptedVolume(deviceName: string, size: Size): ec2.BlockDevice {
  return {
    deviceName,
    volume: ec2.BlockDeviceVolume.ebs(size.toGibibytes(), {
      encrypted: true,
      volumeType: ec2.EbsDeviceVolumeType.GP3,
      deleteOnTermination: true,
    }),
  };
}

/** The root volume of the library's instances (Amazon Linux 2023, Debian and Ubuntu images boot from /dev/xvda). */
export function encryptedRootVolume(size: Size): ec2.BlockDevice {
  return encryptedVolume('/dev/xvda', size);
}
