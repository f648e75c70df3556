import * as fs from 'fs';
import * as path from 'path';
import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as ts from 'typescript';
import * as lib from '../lib';
import { ELASTIC_DEFAULTS } from '../lib/cache-fleet/elastic';
import { NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS, ROUTE53_FAN_OUT_DEFAULTS } from '../lib/cache-fleet/fan-out-options';
import { MIRRORING_DEFAULTS } from '../lib/cache-fleet/mirror';
import { NODE_DISK_CACHE_DEFAULTS } from '../lib/cache-fleet/node-disk-cache';
import { CACHE_FLEET_DEFAULTS } from '../lib/cache-fleet/options';
import { CACHED_FILE_SYSTEM_DEFAULTS } from '../lib/cached-file-system';
import { FLEET_SOURCE_DEFAULTS } from '../lib/client/mount-source';
import { CULL_LIMITS_DEFAULTS, FS_CACHE_CLIENT_DEFAULTS } from '../lib/client/options';
import { CLIENT_WARMING_DEFAULTS } from '../lib/client/warming';
import { CLUSTER_HOSTS_DEFAULTS } from '../lib/containers/cluster-hosts';
import { EKS_FLEET_VOLUME_DEFAULTS } from '../lib/containers/eks-fleet-volume';
import { CACHE_FLEET_EXPORT_DEFAULTS } from '../lib/containers/fleet-export';
import { EBS_DISK_CACHE_DEFAULTS, INSTANCE_STORE_DISK_CACHE_DEFAULTS } from '../lib/fscache/disk-cache';
import { COMMON_INSTANCE_DEFAULTS } from '../lib/instance/options';
import { CACHE_DASHBOARD_DEFAULTS } from '../lib/monitoring/dashboard-defaults';
import { EFS_ORIGIN_DEFAULTS, NFS_SERVER_PORTS_DEFAULTS } from '../lib/origin/cache-origin';
import { ORIGIN_FILE_SYSTEM_DEFAULTS } from '../lib/origin/origin-file-system';
import { DATA_SEEDER_DEFAULTS } from '../lib/seeding/data-seeder';

/*
 * Every `@default` that names a value (`@default Duration.minutes(3)`, not `@default - a new role`) is its
 * construct's defaults table's entry: the table is what the code applies, so the documentation cannot drift from it.
 */

interface DocumentedDefault {
  readonly owner: string;
  readonly prop: string;
  readonly expression: string;
  readonly where: string;
}

const LIB = path.join(__dirname, '..', 'lib');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'private' ? [] : sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The names lib/index.ts exports: the public API. */
function exportedNames(): Set<string> {
  const index = fs.readFileSync(path.join(LIB, 'index.ts'), 'utf8');
  return new Set([...index.matchAll(/export \{([^}]*)\}/g)].flatMap((m) => m[1].split(',').map((n) => n.trim())));
}

/** The value-`@default`s of the props of every interface the package exports. */
function documentedDefaults(): DocumentedDefault[] {
  const exported = exportedNames();
  const found: DocumentedDefault[] = [];
  for (const file of sourceFiles(LIB)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      if (!ts.isInterfaceDeclaration(statement) || !exported.has(statement.name.text)) continue;
      for (const member of statement.members) {
        if (!ts.isPropertySignature(member) || !member.name) continue;
        for (const tag of ts.getJSDocTags(member)) {
          if (tag.tagName.text !== 'default') continue;
          const text = (ts.getTextOfJSDocComment(tag.comment) ?? '').replace(/\s+/g, ' ').trim();
          if (text.startsWith('-')) continue;
          const line = source.getLineAndCharacterOfPosition(member.getStart()).line + 1;
          found.push({
            owner: statement.name.text,
            prop: member.name.getText(source),
            expression: text.split(' - ')[0].trim(),
            where: `${path.relative(path.join(LIB, '..'), file)}:${line}`,
          });
        }
      }
    }
  }
  return found;
}

/** Evaluates a `@default` expression with the names a user's code would have in scope. */
function evaluate(expression: string): unknown {
  const scope: Record<string, unknown> = { ...lib, Duration, Size, RemovalPolicy, efs };
  return new Function(...Object.keys(scope), `return (${expression});`)(...Object.values(scope));
}

/** A value comparable with `toEqual`: durations in milliseconds, sizes in bytes, objects by their own fields. */
function comparable(value: unknown): unknown {
  if (value instanceof Duration) return { duration: value.toMilliseconds() };
  if (value instanceof Size) return { size: value.toBytes() };
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === 'object') {
    const fields = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v)]));
    return { class: value.constructor.name, ...fields };
  }
  return value;
}

/**
 * The entries of `CommonInstanceOptions` in the tables of the constructs that launch instances: each construct's own,
 * documented together in the option's `@default - ...` text (checked below).
 */
const INSTANCE_DEFAULTS = ['instanceType', 'rootVolumeSize'] as const;

/** Each interface's defaults table: the one the construct that takes the interface applies. */
const DEFAULTS_TABLES: Record<string, Readonly<Record<string, unknown>>> = {
  // The dashboard's table holds the settings of its figures and alarms too, which no prop sets yet.
  CacheDashboardOptions: omit(CACHE_DASHBOARD_DEFAULTS, 'display', 'alarms'),
  CachedFileSystemProps: CACHED_FILE_SYSTEM_DEFAULTS,
  // The fleet's own table holds the defaults of its nested options too, and two that its TSDoc describes rather than
  // names: the fan-out (another for an elastic fleet) and the root volume (CommonInstanceOptions, per construct).
  CacheFleetOptions: omit(CACHE_FLEET_DEFAULTS, 'tuning', 'warming', 'elasticFanOut', 'fanOut', ...INSTANCE_DEFAULTS),
  // An imported fleet's attributes default to what a CacheFleet applies (lib/cache-fleet/attributes.ts).
  CacheFleetExportOptions: CACHE_FLEET_EXPORT_DEFAULTS,
  ClientWarmingOptions: CLIENT_WARMING_DEFAULTS,
  CacheFleetAttributes: pick(CACHE_FLEET_DEFAULTS, 'exportPath', 'attributeCacheTimeout', 'directoryCacheTimeout', 'clientNfsVersion', 'enaExpress'),
  CommonInstanceOptions: COMMON_INSTANCE_DEFAULTS,
  CullLimits: CULL_LIMITS_DEFAULTS,
  DataSeederProps: omit(DATA_SEEDER_DEFAULTS, ...INSTANCE_DEFAULTS),
  EbsDiskCacheOptions: EBS_DISK_CACHE_DEFAULTS,
  ClusterHostsOptions: CLUSTER_HOSTS_DEFAULTS,
  EksFleetVolumeProps: EKS_FLEET_VOLUME_DEFAULTS,
  ElasticCapacityOptions: ELASTIC_DEFAULTS,
  EfsOriginOptions: EFS_ORIGIN_DEFAULTS,
  FleetSourceOptions: FLEET_SOURCE_DEFAULTS,
  FsCacheClientOptions: omit(FS_CACHE_CLIENT_DEFAULTS, ...INSTANCE_DEFAULTS),
  InstanceStoreDiskCacheOptions: INSTANCE_STORE_DISK_CACHE_DEFAULTS,
  MirroringOptions: MIRRORING_DEFAULTS,
  NetworkLoadBalancerFanOutOptions: NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS,
  NfsServerPorts: NFS_SERVER_PORTS_DEFAULTS,
  NodeDiskCacheOptions: NODE_DISK_CACHE_DEFAULTS,
  OriginFileSystemOptions: ORIGIN_FILE_SYSTEM_DEFAULTS,
  Route53FanOutOptions: ROUTE53_FAN_OUT_DEFAULTS,
  TuningOptions: CACHE_FLEET_DEFAULTS.tuning,
  WarmingOptions: CACHE_FLEET_DEFAULTS.warming,
};

function omit<T extends object, K extends keyof T>(table: T, ...keys: K[]): Omit<T, K> {
  return Object.fromEntries(Object.entries(table).filter(([k]) => !keys.includes(k as K))) as Omit<T, K>;
}

function pick<T extends object, K extends keyof T>(table: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, table[k]])) as Pick<T, K>;
}

const documented = documentedDefaults();

describe('every @default that names a value is its defaults table entry', () => {
  test('the scan finds the documented defaults (it reads the TSDoc of lib/)', () => {
    expect(documented.length).toBeGreaterThan(40);
    expect(documented).toContainEqual(expect.objectContaining({ owner: 'CacheFleetOptions', prop: 'exportPath', expression: "'/efs'" }));
  });

  test('each interface with a value default has a table', () => {
    const owners = [...new Set(documented.map((d) => d.owner))].sort();
    expect(owners.filter((o) => !(o in DEFAULTS_TABLES))).toEqual([]);
  });

  test.each(documented.map((d) => [`${d.owner}.${d.prop} (${d.where})`, d] as const))('%s', (_name, d) => {
    const table = DEFAULTS_TABLES[d.owner] ?? {};
    expect(Object.keys(table)).toContain(d.prop);
    expect(comparable(evaluate(d.expression))).toEqual(comparable(table[d.prop]));
  });

  test('each table entry is a documented default of its interface', () => {
    const stray: string[] = [];
    for (const [owner, table] of Object.entries(DEFAULTS_TABLES)) {
      for (const prop of Object.keys(table)) {
        if (!documented.some((d) => d.owner === owner && d.prop === prop)) stray.push(`${owner}.${prop}`);
      }
    }
    expect(stray).toEqual([]);
  });
});

describe('CommonInstanceOptions: each construct\'s defaults, from its table, in the option\'s text', () => {
  const text = (prop: string) => {
    const source = ts.createSourceFile('options.ts', fs.readFileSync(path.join(LIB, 'instance', 'options.ts'), 'utf8'), ts.ScriptTarget.Latest, true);
    const iface = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'CommonInstanceOptions')!;
    const member = iface.members.find((m) => m.name?.getText(source) === prop)!;
    const tag = ts.getJSDocTags(member).find((t) => t.tagName.text === 'default')!;
    return (ts.getTextOfJSDocComment(tag.comment) ?? '').replace(/\s+/g, ' ');
  };
  const tables = { 'a fleet\'s nodes': CACHE_FLEET_DEFAULTS, 'FS-Cache clients': FS_CACHE_CLIENT_DEFAULTS, 'a data seeder': DATA_SEEDER_DEFAULTS };
  test.each(Object.entries(tables))('%s', (who, table) => {
    expect(text('instanceType')).toContain(`${table.instanceType} for ${who}`);
    expect(text('rootVolumeSize')).toMatch(new RegExp(`Size\\.gibibytes\\(${table.rootVolumeSize.toGibibytes()}\\) for [^;]*${who}`));
  });
});
