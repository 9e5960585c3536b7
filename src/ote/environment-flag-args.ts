import type { OteEnvironment } from "@netstress/core/model/ote-environment.ts";

/** Flag name and the extension API version that introduced it (older binaries reject it). */
const FLAGS: Record<Exclude<keyof OteEnvironment, "facts">, { flag: string; since: string }> = {
  platform: { flag: "platform", since: "v1.0" },
  network: { flag: "network", since: "v1.0" },
  networkStack: { flag: "network-stack", since: "v1.0" },
  architecture: { flag: "architecture", since: "v1.0" },
  topology: { flag: "topology", since: "v1.0" },
  upgrade: { flag: "upgrade", since: "v1.0" },
  version: { flag: "version", since: "v1.0" },
  externalConnectivity: { flag: "external-connectivity", since: "v1.0" },
  optionalCapabilities: { flag: "optional-capability", since: "v1.0" },
  apiGroups: { flag: "api-group", since: "v1.1" },
  featureGates: { flag: "feature-gate", since: "v1.1" },
};

/**
 * `list` arguments for an environment, as `--name=value` (one per value for lists and facts),
 * leaving out flags newer than the binary's extension API version so an older binary still lists.
 * Values are arguments to execve, never shell text.
 */
export function environmentFlagArgs(options: { environment: OteEnvironment; apiVersion?: string }): string[] {
  const { environment, apiVersion } = options;
  const supported = (since: string) => apiVersion === undefined || compareApiVersions(apiVersion, since) >= 0;
  const args: string[] = [];
  for (const [key, { flag, since }] of Object.entries(FLAGS)) {
    const value = environment[key as keyof typeof FLAGS];
    if (value === undefined || !supported(since)) continue;
    for (const item of Array.isArray(value) ? value : [value]) args.push(`--${flag}=${item}`);
  }
  for (const [key, value] of Object.entries(environment.facts ?? {}))
    args.push(`--fact=${factPair(key, value)}`);
  return args;
}

/**
 * KEY=VALUE as the binary's StringToString parser reads back exactly: text with two or more `=` is
 * read as a CSV record, so such a pair holding a comma, quote or line break is CSV-quoted.
 */
function factPair(key: string, value: string): string {
  const pair = `${key}=${value}`;
  const csvRead = pair.split("=").length > 2;
  return csvRead && /[",\r\n]/.test(pair) ? `"${pair.replace(/"/g, '""')}"` : pair;
}

/** Compares `vMAJOR.MINOR` versions; an unreadable version counts as the oldest. */
function compareApiVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const match = /^v(\d+)\.(\d+)/.exec(v);
    return match ? [Number(match[1]), Number(match[2])] : [0, 0];
  };
  const [aMajor = 0, aMinor = 0] = parse(a);
  const [bMajor = 0, bMinor = 0] = parse(b);
  return aMajor - bMajor || aMinor - bMinor;
}
