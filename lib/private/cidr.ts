import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { propError } from './errors';

/** A parsed CIDR block: the address as a number of 32 (IPv4) or 128 (IPv6) bits, and the prefix length. */
export interface Cidr {
  readonly version: 4 | 6;
  readonly address: bigint;
  readonly prefix: number;
}

const V4_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** An IPv4 address in dotted-quad form (four decimal parts, 0-255, no leading zeros), or undefined. */
function parseIpv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || !parts.every((p) => V4_OCTET.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

/** An IPv6 address (RFC 4291 text forms: `::` once at most, an optional dotted IPv4 tail; no zone), or undefined. */
function parseIpv6(s: string): bigint | undefined {
  if (!s.includes(':') || s.split('::').length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIpv4(item);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (HEX_GROUP.test(item)) {
        out.push(parseInt(item, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const [head, tail] = s.split('::');
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  if (!h || !t) return undefined;
  // The dotted tail is only allowed at the very end of the address.
  if (tail !== undefined && head.split(':').some((g) => g.includes('.'))) return undefined;
  const missing = 8 - h.length - t.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...h, ...new Array<number>(tail === undefined ? 0 : missing).fill(0), ...t]
    .reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function bits(version: 4 | 6): number {
  return version === 4 ? 32 : 128;
}

/** The block's text in canonical form: dotted quad, or lower-case IPv6 with the longest zero run as `::` (RFC 5952). */
export function formatCidr(c: Cidr): string {
  if (c.version === 4) {
    return `${[24n, 16n, 8n, 0n].map((s) => String((c.address >> s) & 0xffn)).join('.')}/${c.prefix}`;
  }
  const g = Array.from({ length: 8 }, (_v, i) => Number((c.address >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = (a: number[]) => a.map((x) => x.toString(16)).join(':');
  const text = best.at < 0 ? hex(g) : `${hex(g.slice(0, best.at))}::${hex(g.slice(best.at + best.len))}`;
  return `${text}/${c.prefix}`;
}

/**
 * Parses `address/prefix` (IPv4 or IPv6). Throws `Invalid <prop>` naming what is wrong: not an address, a prefix
 * length out of range, host bits set, or a /0 in any spelling (which would match every address).
 */
export function parseCidr(scope: IConstruct | undefined, prop: string, text: string): Cidr {
  const slash = text.indexOf('/');
  if (slash < 0) {
    const one = parseIpv4(text) !== undefined ? 32 : parseIpv6(text) !== undefined ? 128 : undefined;
    throw propError(scope, prop, `'${text}' is not a CIDR block: ` +
      (one ? `add the prefix length (${text}/${one} for one address).` : 'write address/prefix length, e.g. 10.0.0.0/16.'));
  }
  const addr = text.slice(0, slash);
  const len = text.slice(slash + 1);
  // Checked before the address: nfs-utils reads shorthand such as 0/0 (inet_aton) and a netmask after the slash, so
  // any /0 (or all-zero netmask) matches every client however the address is written.
  if (/^0+$/.test(len) || parseIpv4(len) === 0n || parseIpv6(len) === 0n) {
    throw propError(scope, prop, `${text} would export to everyone: a /0 prefix matches every address; name the clients' networks.`);
  }
  const v4 = parseIpv4(addr);
  const v6 = v4 === undefined ? parseIpv6(addr) : undefined;
  if (v4 === undefined && v6 === undefined) {
    throw propError(scope, prop, `'${text}' is not a CIDR block: '${addr}' is not an IPv4 address (four decimal parts 0-255 ` +
      'without leading zeros) or an IPv6 address.');
  }
  const version = v4 !== undefined ? 4 : 6;
  const max = bits(version);
  if (!/^[1-9][0-9]*$/.test(len) || Number(len) > max) {
    throw propError(scope, prop, `'${text}' has an invalid prefix length '${len}': an IPv${version} prefix is a whole number ` +
      `from 1 to ${max}, without leading zeros.`);
  }
  const c: Cidr = { version, address: (v4 ?? v6)!, prefix: Number(len) };
  const host = (1n << BigInt(max - c.prefix)) - 1n;
  if ((c.address & host) !== 0n) {
    const net = formatCidr({ ...c, address: c.address & ~host });
    throw propError(scope, prop, `'${text}' has host bits set: the network is ${net}; for the one address write ` +
      `${formatCidr({ ...c, prefix: max })}.`);
  }
  if (version === 6 && c.prefix >= 96 && c.address >> 32n === 0xffffn) {
    const v4net = formatCidr({ version: 4, address: c.address & 0xffffffffn, prefix: c.prefix - 96 });
    throw propError(scope, prop, `'${text}' is an IPv4-mapped IPv6 network; write IPv4 clients as IPv4 (${v4net}).`);
  }
  return c;
}

/** Whether the blocks together cover every address of their version. */
function coverAll(blocks: Cidr[], version: 4 | 6): boolean {
  const max = bits(version);
  const ranges = blocks.filter((b) => b.version === version)
    .map((b) => [b.address, b.address + (1n << BigInt(max - b.prefix))] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let next = 0n;
  for (const [start, end] of ranges) {
    if (start > next) return false;
    if (end > next) next = end;
  }
  return next === 1n << BigInt(max);
}

/**
 * Checks an NFS export access list: every literal entry parses (`parseCidr`), and the entries together do not cover
 * every IPv4 or every IPv6 address. Unresolved tokens are skipped: the instance checks them at boot.
 */
export function checkClientCidrs(scope: IConstruct, prop: string, cidrs: string[]): void {
  const blocks = cidrs.filter((c) => !Token.isUnresolved(c)).map((c) => parseCidr(scope, prop, c));
  for (const version of [4, 6] as const) {
    if (coverAll(blocks, version)) {
      const named = blocks.filter((b) => b.version === version).map(formatCidr).join(', ');
      throw propError(scope, prop, `${named} together would export to everyone: they cover every IPv${version} address; ` +
        'name the clients\' networks.');
    }
  }
}

/**
 * The access list as the cache node's EFSC_EXPORT_CLIENTS: literal entries in canonical form (lower-case hex,
 * IPv6 without a dotted tail, which the node's check requires), tokens as they are, separated by spaces.
 */
export function exportClients(cidrs: string[]): string {
  return cidrs.map((c) => (Token.isUnresolved(c) ? c : formatCidr(parseCidr(undefined, 'clientCidrs', c)))).join(' ');
}

/** Whether `inner` lies wholly inside `outer` (same version, a prefix at least as long, the same network bits). */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  if (inner.version !== outer.version || inner.prefix < outer.prefix) return false;
  const shift = BigInt(bits(outer.version) - outer.prefix);
  return inner.address >> shift === outer.address >> shift;
}

/** Private address space: RFC 1918, shared address space (RFC 6598) and IPv6 unique local addresses (RFC 4193). */
const PRIVATE: Cidr[] = [
  { version: 4, address: 0x0a000000n, prefix: 8 },
  { version: 4, address: 0xac100000n, prefix: 12 },
  { version: 4, address: 0xc0a80000n, prefix: 16 },
  { version: 4, address: 0x64400000n, prefix: 10 },
  { version: 6, address: 0xfcn << 120n, prefix: 7 },
];

/** Whether a block lies wholly in private address space. */
export function cidrIsPrivate(c: Cidr): boolean {
  return PRIVATE.some((p) => cidrWithin(c, p));
}
