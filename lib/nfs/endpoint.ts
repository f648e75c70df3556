// Host names a client or a node mounts, checked at synth (a leaf module: the fleet's attributes and its origin both
// check them, and neither may import the other).

const IPV4_OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4_RE = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);
const LABEL_RE = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * Whether `s` is a name a client can mount as `<s>:<path>`: a DNS name (labels of letters, digits and -, at most 253
 * characters, one trailing dot allowed) or an IPv4 address. Not an IPv6 address: mount.nfs reads `fd00::1:/efs` as
 * the host `fd00`, and the client's boot check takes no brackets.
 */
export function isEndpoint(s: string): boolean {
  if (IPV4_RE.test(s)) return true;
  const name = s.endsWith('.') ? s.slice(0, -1) : s;
  const labels = name.split('.');
  // All digits and dots is an address, and this one is not valid (IPV4_RE failed): 10.0.0.999, 10.1.
  if (labels.every((l) => /^[0-9]+$/.test(l))) return false;
  return name.length > 0 && name.length <= 253 && labels.every((l) => LABEL_RE.test(l));
}
