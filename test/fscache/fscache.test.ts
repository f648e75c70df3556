import { App, Size, Stack } from 'aws-cdk-lib';
import { DiskCache } from '../../lib/fscache/disk-cache';
import { checkDeviceModel, DEFAULT_CULL, diskCacheParameters, EBS_MODEL, INSTANCE_STORE_MODEL } from '../../lib/fscache/fscache';
import { DISK_CACHE_METRICS, DiskCacheMetric, diskCacheMetric } from '../../lib/fscache/metrics';

/*
 * lib/fscache/: the disk cache that cache nodes and FS-Cache clients share (assets/lib/fscache.sh's parameters, the
 * `DiskCache` factories, the disk cache's metrics). Its uses are proved in test/client/ and test/cache-fleet/.
 */

describe('the parameters of assets/lib/fscache.sh', () => {
  test('name the directory, label, tag, devices and every culling limit', () => {
    expect(diskCacheParameters({ dir: '/var/cache/fscache', label: 'fscache', tag: 'efscache', deviceModel: INSTANCE_STORE_MODEL,
      initializeDevices: false, cull: DEFAULT_CULL })).toEqual({
      EFSC_CACHE_DIR: '/var/cache/fscache', EFSC_CACHE_LABEL: 'fscache', EFSC_CACHE_TAG: 'efscache',
      EFSC_DEVICE_MODEL: 'Amazon EC2 NVMe Instance Storage', EFSC_INITIALIZE_DEVICES: 'false',
      EFSC_CULL_BRUN: '10', EFSC_CULL_BCULL: '7', EFSC_CULL_BSTOP: '3', EFSC_CULL_FRUN: '10', EFSC_CULL_FCULL: '7', EFSC_CULL_FSTOP: '3',
    });
  });

  test('a device model must be printable ASCII without a trailing space', () => {
    const scope = new Stack(new App(), 'S');
    expect(() => checkDeviceModel(scope, 'diskCache.deviceModel', 'Model ')).toThrow(/Invalid diskCache.deviceModel: must be printable ASCII/);
    expect(() => checkDeviceModel(scope, 'diskCache.deviceModel', 'Mod\nel')).toThrow(/printable ASCII/);
    expect(() => checkDeviceModel(scope, 'diskCache.deviceModel', EBS_MODEL)).not.toThrow();
  });
});

test('DiskCache: the instance store or an EBS volume, each with its device model', () => {
  expect(DiskCache.instanceStore()._deviceModel).toBe(INSTANCE_STORE_MODEL);
  expect(DiskCache.instanceStore()._source).toBe('instance-store');
  const ebs = DiskCache.ebs({ volumeSize: Size.gibibytes(200) });
  expect([ebs._ebs, ebs._deviceModel, ebs._source, ebs._volumeSize?.toGibibytes()]).toEqual([true, EBS_MODEL, 'ebs', 200]);
});

test('every DiskCacheMetric has its instance metric, and only those', () => {
  for (const m of Object.values(DiskCacheMetric)) expect(diskCacheMetric(m).name).toBe(m);
  expect(Object.values(DISK_CACHE_METRICS).map((m) => m.name).sort()).toEqual(Object.values(DiskCacheMetric).sort());
});
