import * as fs from 'fs';
import * as path from 'path';

/*
 * docs/sizing-and-cost.md's EC2 figures are the recorded source's (docs/ec2-prices.json, written by
 * tools/ec2-prices.py from AWS's Karpenter provider), and the sample's cost table adds up: a price refreshed in the
 * JSON fails here until the page says the same.
 */

const DOCS = path.join(__dirname, '..', 'docs');
const page = fs.readFileSync(path.join(DOCS, 'sizing-and-cost.md'), 'utf8');
const recorded = JSON.parse(fs.readFileSync(path.join(DOCS, 'ec2-prices.json'), 'utf8')) as {
  source: string; generatedAt: string; region: string; prices: Record<string, number>;
};
const price = (type: string) => {
  const p = recorded.prices[type];
  if (p === undefined) throw new Error(`docs/ec2-prices.json has no price for ${type}`);
  return p;
};

/** Dollars and cents, as the page writes a month: $1,234.57 for 1234.567. */
const dollars = (n: number) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
/** A number as the page writes it: no trailing zeros beyond what it needs (0.1248, 7.9872, 0.11865). */
const plain = (n: number) => `$${Number(n.toFixed(5))}`;
/** A section of the page, from its heading to the next. */
const section = (heading: string) => {
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/sizing-and-cost.md has no section "${heading}"`);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
};
/** The cells of the table row of `text` whose first cell (bold or not) starts with `first`. */
const rowOf = (text: string, first: string) => {
  const line = text.split('\n').map((l) => l.replace(/\*\*/g, '')).find((l) => l.startsWith(`| ${first}`));
  if (!line) throw new Error(`docs/sizing-and-cost.md has no table row starting "| ${first}"`);
  return line.split('|').slice(1, -1).map((c) => c.trim());
};
const priceRow = (first: string) => rowOf(section('Prices'), first);
const row = (first: string) => rowOf(section('What the sample stack costs'), first);
const money = (cell: string) => Number(cell.replace(/[$,]/g, ''));

describe('docs/sizing-and-cost.md prices EC2 as the recorded source does', () => {
  test('the source and its date are named', () => {
    expect(recorded.region).toBe('us-east-1');
    const [, version] = recorded.source.match(/@(v[\d.]+)\//)!;
    expect(page).toContain(`at ${version}, generated ${recorded.generatedAt.slice(0, 10)} for us-east-1`);
    expect(page).toContain(`blob/${version}/pkg/providers/pricing/zz_generated.pricing_aws.go`);
  });

  test.each([
    ['cache node, c7gn.16xlarge', 'c7gn.16xlarge'],
    ['cache node, c7gn.large', 'c7gn.large'],
    ['FS-Cache client, m6id.xlarge', 'm6id.xlarge'],
    ['FS-Cache client, m6id.large', 'm6id.large'],
    ['data seeder, m7g.xlarge', 'm7g.xlarge'],
  ])('the prices table: %s', (first, type) => {
    expect(priceRow(first)[1]).toBe(`${plain(price(type))} per hour`);
  });

  test.each([
    ['trial', 'c7gn.large', 'm6id.large', 1],
    ['production', 'c7gn.16xlarge', 'm6id.xlarge', 3],
  ])('the sample\'s %s size: nodes, client and totals per hour and per month (730 h)', (_size, node, client, column) => {
    const nodes = row('two cache nodes');
    const one = row('one client');
    expect(money(nodes[column])).toBeCloseTo(2 * price(node), 5);
    expect(nodes[column + 1]).toBe(dollars(730 * 2 * price(node)));
    expect(money(one[column])).toBeCloseTo(price(client), 5);
    expect(one[column + 1]).toBe(dollars(730 * price(client)));
    // The fixed items are the same in both sizes; the totals add every row up.
    const items = ['two cache nodes', 'one client', 'NAT gateway', 'private hosted zone', 'dashboard', '5 alarms',
      '10 custom metrics'].map(row);
    const hour = items.reduce((sum, r) => sum + money(r[column]), 0);
    const month = items.reduce((sum, r) => sum + money(r[column + 1]), 0);
    const total = row('total');
    expect(money(total[column])).toBeCloseTo(hour, 5);
    expect(money(total[column + 1])).toBeCloseTo(month, 1);
  });

  test('the break-even of the default fleet is worked through with the recorded node price', () => {
    const fleet = 2 * price('c7gn.16xlarge');
    const gb = fleet / 0.03;
    expect(page).toContain(`2 × ${plain(price('c7gn.16xlarge'))} = ${plain(fleet)}`);
    expect(page).toContain(`*G* = ${fleet} / 0.03 = ${gb.toFixed(1)} GB per hour`);
    expect(page).toContain(`${(gb * 1e9 / 3600 / 1e6).toFixed(1)} MB/s sustained`);
    expect(page).toContain(`(2 × ${plain(price('c7gn.large'))} = ${plain(2 * price('c7gn.large'))} per\nhour) need ` +
      `${(2 * price('c7gn.large') / 0.03).toFixed(1)} GB per hour`);
  });
});
