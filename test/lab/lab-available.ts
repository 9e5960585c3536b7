import { spawnSync } from "node:child_process";

/** The lab needs root and `ip netns`; without them its tests are skipped, saying why. */
export const labAvailable = process.getuid?.() === 0 && spawnSync("ip", ["netns", "list"]).status === 0;

export const labSkipReason = "the lab needs root and `ip netns` (iproute2): its tests are skipped here";

if (!labAvailable) process.stderr.write(`${labSkipReason}\n`);
