/*
 * The kinds of `SeedSource` and how the seeding script spells them. A template holds the spelling, never the enum's
 * value: test/upgrade-contract.test.ts pins it, and a change of one would replace a seeder (which would seed again).
 */

/** The kinds of seed source, one for each factory of `SeedSource`. */
export enum SeedKind {
  S3 = 'S3',
  ASSET = 'ASSET',
  INSTANCE_DIRECTORY = 'INSTANCE_DIRECTORY',
}

/** How the seeding script names each kind of seed source (`EFSC_SOURCE_KIND`). */
export const SEED_SOURCE_KIND: Readonly<Record<SeedKind, string>> = {
  [SeedKind.S3]: 's3',
  [SeedKind.ASSET]: 'asset',
  [SeedKind.INSTANCE_DIRECTORY]: 'local',
};
