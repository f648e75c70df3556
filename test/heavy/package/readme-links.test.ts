import { missingTargets, relativeLinks } from './readme-links';

describe('the README link check of the packed library', () => {
  const markdown = [
    'See [the figures](docs/benchmarks.md), with a text that spans [two',
    'lines](./docs/CONTRACT.md#rules "title"), and ![a chart](docs/benchmarks.png).',
    '[Site](https://example.com/x.md), [mail](mailto:a@example.com), [section](#set-up), [root](/etc/passwd).',
    'Inline code is no link: `arr[0](x)`.',
    '```ts',
    'const f = fns[0](docs/in-code.md);',
    '```',
    '[ref]: docs/reference.md',
    '<img src="docs/logo%20big.png" alt="logo">',
    'Up and out: [parent](../bench), a folder: [lab](test/heavy/lab/).',
  ].join('\n');

  test('finds inline links, images, reference definitions and HTML sources, and nothing in code', () => {
    expect(relativeLinks(markdown).sort()).toEqual([
      '../bench',
      './docs/CONTRACT.md',
      'docs/benchmarks.md',
      'docs/benchmarks.png',
      'docs/logo big.png',
      'docs/reference.md',
      'test/heavy/lab/',
    ]);
  });

  test('reports each target the file list lacks, and accepts a folder that holds a listed file', () => {
    const files = ['README.md', 'docs/benchmarks.md', 'docs/benchmarks.png', 'test/heavy/lab/README.md'];
    expect(missingTargets(markdown, files).sort()).toEqual([
      '../bench',
      './docs/CONTRACT.md',
      'docs/logo big.png',
      'docs/reference.md',
    ]);
    expect(missingTargets(markdown, [...files, 'docs/CONTRACT.md', 'docs/logo big.png', 'docs/reference.md'])).toEqual(['../bench']);
  });

  test('resolves the links of a page in a folder from that folder', () => {
    const page = 'See [the fleet](cache-fleet.md#props), [the API](../API.md), [the README](../README.md#limits) and [out](../../x.md).';
    expect(missingTargets(page, ['README.md', 'API.md', 'docs/cache-fleet.md'], 'docs')).toEqual(['../../x.md']);
    expect(missingTargets(page, ['README.md', 'API.md'], 'docs')).toEqual(['cache-fleet.md', '../../x.md']);
  });
});
