import { spawnSync } from "node:child_process";

/** The lab needs root and `ip netns`; without them its tests are skipped, saying why. */
export const labAvailable = process.getuid?.() === 0 && spawnSync("ip", ["netns", "list"]).status === 0;

export const labSkipReason = "the lab needs root and `ip netns` (iproute2): its tests are skipped here";

if (!labAvailable) process.stderr.write(`${labSkipReason}\n`);

/** A lab name of this test process's own, so that test runs side by side do not take each other's labs. */
export const testLabName = (tag: string) => `${tag}${process.pid.toString(36)}`;
