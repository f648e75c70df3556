/**
 * The data seeder both AWS-boundary runs use (test/heavy/emulator/seeder.emu.ts on the host, test/heavy/lab/aws.lab.ts on a real
 * kernel): a DataSeeder whose source is the prefix raw/ of a bucket, over plain NFS (no efs-utils in the lab).
 */
import { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { DataSeeder, MountHelper, SeedSource } from '../../../lib';
import { importedFs, stackWithVpc } from '../../util';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData } from '../lab/harness/user-data';

/** The source bucket. */
export const SEED_BUCKET = 'efsc-seed-data';
/** Its objects: the prefix raw/ is the source; other/ is outside it. */
export const SEED_FILES: Record<string, string> = { 'raw/a.txt': 'alpha\n', 'raw/sub/b.txt': 'beta\n', 'raw/sub/deeper/c.bin': 'x'.repeat(70_000) };
/** The stack the seeder signals. */
export const SEED_STACK = 'Seed';

/**
 * The seeder's user data (source: the bucket's prefix raw/, target `targetPath`), deploy-time values filled in as in
 * us-east-1, and its synthesized template with its instance's and its role's logical ids.
 */
export function seederUserData(targetPath?: string): { userData: string; logicalId: string; template: CfnTemplate; roleId: string } {
  const { stack, vpc } = stackWithVpc(undefined, SEED_STACK);
  const seeder = new DataSeeder(stack, 'Seeder', {
    vpc, fileSystem: importedFs(stack), mountHelper: MountHelper.NFS, targetPath,
    source: SeedSource.s3(s3.Bucket.fromBucketName(stack, 'Data', SEED_BUCKET), 'raw'),
  });
  const template = Template.fromStack(stack);
  const [logicalId] = Object.entries(template.findResources('AWS::EC2::Instance'))[0];
  const userData = resolveUserData(template.toJSON() as CfnTemplate, logicalId, PSEUDO_VALUES);
  return { userData, logicalId, template: template.toJSON(), roleId: stack.getLogicalId(seeder.role.node.defaultChild as CfnResource) };
}
