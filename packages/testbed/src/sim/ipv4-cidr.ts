import { SimError } from "./sim-error.ts";

/** An IPv4 range such as 10.128.0.0/24: its size, its nth address and whether it holds an address. */
export interface Ipv4Cidr {
  text: string;
  prefix: number;
  size: number;
  /** The address `offset` past the range's first (the network address is offset 0). */
  at(offset: number): string;
  contains(address: string): boolean;
  /** The offset of an address inside the range. */
  offsetOf(address: string): number;
}

const toNumber = (address: string): number | undefined => {
  const parts = address.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
};
const toText = (n: number): string => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join(".");

/** Parses `a.b.c.d/len`; a clear SimError for anything else or a range whose host bits are set. */
export function ipv4Cidr(text: string): Ipv4Cidr {
  const [address = "", length = ""] = text.split("/");
  const base = toNumber(address);
  const prefix = Number(length);
  if (base === undefined || !/^\d{1,2}$/.test(length) || prefix > 32) {
    throw new SimError(`"${text}" is not an IPv4 CIDR such as 10.128.0.0/24`);
  }
  const size = 2 ** (32 - prefix);
  if (base % size !== 0) {
    throw new SimError(
      `"${text}" has host bits set: its network is ${toText(base - (base % size))}/${prefix}`,
    );
  }
  const offsetOf = (a: string) => (toNumber(a) ?? -1) - base;
  return {
    text,
    prefix,
    size,
    at(offset) {
      if (!Number.isInteger(offset) || offset < 0 || offset >= size) {
        throw new SimError(`${text} has no address at offset ${offset}`);
      }
      return toText(base + offset);
    },
    contains: (a) => offsetOf(a) >= 0 && offsetOf(a) < size,
    offsetOf,
  };
}
