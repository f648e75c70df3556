import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CachedFileSystem, CachedFileSystemProps, Capacity } from '../../lib';
import { CACHE_DASHBOARD_DEFAULTS } from '../../lib/monitoring/dashboard-defaults';
import { decimal, readChargesAvoided } from '../../lib/monitoring/segments/headline';
import { stackWithVpc } from '../util';
import { flatten } from '../util/user-data';

/*
 * The headline's savings figure: the bytes the caches served, turned into the EFS Elastic read charges they avoided
 * (bytes / 1e9 * the price per GB), beside the share of reads served. Its price is `efsReadPricePerGb`.
 */

interface Widget {
  readonly type: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly properties: any;
}

function widgets(props: Partial<CachedFileSystemProps> = {}, clients = 1): Widget[] {
  const { stack, vpc } = stackWithVpc();
  const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2) }, ...props });
  for (let i = 0; i < clients; i++) cfs.addClientLaunchTemplate(`Clients${i + 1}`);
  const [dash] = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'));
  return JSON.parse(flatten(dash.Properties.DashboardBody, (k) => `<${k.replace(/"/g, "'")}>`)).widgets;
}

const titled = (ws: Widget[], re: RegExp) => ws.filter((w) => re.test(w.properties.title ?? ''));

describe('EFS read charges avoided', () => {
  test('by default: the caches\' bytes per hour / 1e9 * 0.03, in USD, its price in the title', () => {
    const ws = widgets();
    const [savings] = titled(ws, /^EFS read charges avoided/);
    expect(savings.type).toBe('metric');
    expect(savings.properties.title).toBe('EFS read charges avoided (USD per hour, at $0.03 per GB)');
    const [expression, ...inputs] = savings.properties.metrics as any[];
    expect(expression[0]).toEqual({ expression: '(FILL(c0, 0) + FILL(c1, 0)) / 1000000000 * 0.03', label: 'EFS read charges avoided (USD)', period: 3600 });
    // Its inputs are the headline's served bytes: the nodes' nfsd reads and the clients' disk cache reads, each summed.
    expect(inputs.map((m) => m.slice(0, 2))).toEqual([['CdkEfsCache', 'NfsdBytesRead'], ['CdkEfsCache', 'CacheDiskReadBytes']]);
    for (const m of inputs) expect(m[m.length - 1]).toMatchObject({ stat: 'Sum', visible: false });
  });

  test('beside the headline: under the share of reads served, in the headline\'s row', () => {
    const ws = widgets();
    const [headline] = titled(ws, /^Reads served by the cache tiers vs read from EFS/);
    const [share] = titled(ws, /^Share of reads served by caches/);
    const [savings] = titled(ws, /^EFS read charges avoided/);
    expect([headline.x, headline.width, headline.height]).toEqual([0, 16, 6]);
    expect([share.x, share.y, share.width, share.height]).toEqual([16, headline.y, 8, 3]);
    expect([savings.x, savings.y, savings.width, savings.height]).toEqual([16, headline.y + 3, 8, 3]);
  });

  test.each([
    [0.036, '0.036'],
    [0, '0'],
    [1e-7, '0.0000001'],
  ])('efsReadPricePerGb %p is written as %s, in the expression and the title', (price, written) => {
    const [savings] = titled(widgets({ monitoring: { efsReadPricePerGb: price } }), /^EFS read charges avoided/);
    expect(savings.properties.metrics[0][0].expression).toBe(`(FILL(c0, 0) + FILL(c1, 0)) / 1000000000 * ${written}`);
    expect(savings.properties.title).toBe(`EFS read charges avoided (USD per hour, at $${written} per GB)`);
  });

  test('every client group added later counts; with no cache tier the figure is 0', () => {
    const [two] = titled(widgets({}, 2), /^EFS read charges avoided/);
    expect(two.properties.metrics[0][0].expression).toBe('(FILL(c0, 0) + FILL(c1, 0) + FILL(c2, 0)) / 1000000000 * 0.03');
    const none = readChargesAvoided([], 0.03) as cloudwatch.MathExpression;
    expect(none.expression).toBe('(0) / 1000000000 * 0.03');
  });

  test('the default is the table\'s: 0.03 USD per GB', () => {
    expect(CACHE_DASHBOARD_DEFAULTS.efsReadPricePerGb).toBe(0.03);
  });

  test.each([
    [0.03, '0.03'],
    [12, '12'],
    [1e-7, '0.0000001'],
    [2.5e-10, '0.00000000025'],
    [1e21, '1000000000000000000000'],
    [1.5e22, '15000000000000000000000'],
  ])('decimal(%p) is %s: no exponent for metric math to misread', (n, s) => {
    expect(decimal(n)).toBe(s);
  });
});
