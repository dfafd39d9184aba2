/**
 * CIDR ranges of the config (`trainingJob.exposure.allowedCidrs`): parsing, and an
 * allow-list that answers whether an address lies inside one of them.
 */
import { BlockList, isIP } from "node:net";

/** One parsed range. */
export interface Cidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/**
 * What a range looks like (hex digits, dots and colons, a slash, a prefix length): the
 * config schema carries it, and with it the chart's values.schema.json; {@link parseCidr}
 * checks the rest at start.
 */
export const CIDR_SHAPE = /^\s*[0-9A-Fa-f.:]+\/\d{1,3}\s*$/;

/** The range `text` (`10.0.0.0/8`, `2001:db8::/32`), or undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = "", prefixText, ...rest] = text.trim().split("/");
  if (rest.length > 0 || prefixText === undefined || !/^\d{1,3}$/.test(prefixText)) return;
  const version = isIP(address);
  const prefix = Number(prefixText);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** Whether addresses lie inside a set of ranges. */
export class AddressAllowList {
  private readonly list = new BlockList();

  /** Throws an Error naming the first entry of `cidrs` that is not a range. */
  constructor(readonly cidrs: readonly string[]) {
    for (const text of cidrs) {
      const cidr = parseCidr(text);
      if (!cidr) throw new Error(`${JSON.stringify(text)} is not a CIDR range`);
      this.list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    }
  }

  /** True when `host` is an IP address inside one of the ranges (a hostname never is). */
  allows(host: string): boolean {
    const version = isIP(host);
    if (version === 0) return false;
    return this.list.check(host, version === 4 ? "ipv4" : "ipv6");
  }
}
