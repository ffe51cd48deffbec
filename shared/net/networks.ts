import ipaddr from 'ipaddr.js';

/**
 * The networks an outbound request may reach (see outbound.ts): a setting's list of CIDR
 * ranges let through, and the rule that every other address must be public unicast. Apart
 * from the HTTP client, so that reading the setting (every process's configuration) does
 * not load it.
 */
export type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Networks from a comma-separated list of CIDR ranges or addresses; throws on a bad entry. */
export function parseNetworks(list: string): Network[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : (() => {
      const ip = ipaddr.parse(entry);
      return [ip, ip.kind() === 'ipv4' ? 32 : 128] as Network;
    })()));
}

/** Whether a connection to this address may be made. */
export function isAllowedAddress(address: string, allowed: Network[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (allowed.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return true;
  return ip.range() === 'unicast';
}

