import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { RegistryError } from "./registry-error.ts";

/** Resolves a host name to every address it has (dns.lookup by default). */
export type HostLookup = (host: string) => Promise<string[]>;

/** Checks a URL before a request is sent to it: refuses it with an error that says why. */
export type EgressGuard = (url: URL, what: string) => Promise<void>;

const defaultLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Private, link-local (cloud metadata included), shared, unspecified and multicast ranges. */
function internalRanges(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const)
    list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of [
    ["::", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
    ["fd00:ec2::", 32],
  ] as const)
    list.addSubnet(net, prefix, "ipv6");
  return list;
}

function loopbackRanges(): BlockList {
  const list = new BlockList();
  list.addSubnet("127.0.0.0", 8, "ipv4");
  list.addAddress("::1", "ipv6");
  return list;
}

/** An IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address it is. */
function unmapped(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: "ipv4" };
  return { address, family: isIP(address) === 6 ? "ipv6" : "ipv4" };
}

/**
 * The bot's rule for where registry traffic may go: a host is resolved and refused when any of its
 * addresses is private, link-local (169.254.169.254, the cloud metadata service, among them) or
 * otherwise internal. Loopback is refused too unless `allowLoopback` (a registry on the same host,
 * tests). Name resolution can change between this check and the connection; the egress
 * NetworkPolicies are the second line against that.
 */
export function createEgressGuard(options: { allowLoopback: boolean; lookup?: HostLookup }): EgressGuard {
  const lookup = options.lookup ?? defaultLookup;
  const internal = internalRanges();
  const loopback = loopbackRanges();
  return async (url, what) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await lookup(host);
    } catch (cause) {
      throw new RegistryError("unavailable", `${what}: cannot resolve ${host}`, { cause });
    }
    for (const raw of addresses) {
      const { address, family } = unmapped(raw);
      const isLoopback = loopback.check(address, family);
      if (isLoopback && options.allowLoopback) continue;
      if (isLoopback || internal.check(address, family)) {
        throw new RegistryError(
          "refused",
          `${what}: ${host} is ${address}, an internal address this bot does not send requests to`,
        );
      }
    }
  };
}
