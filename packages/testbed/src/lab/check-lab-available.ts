import { LabError } from "./lab-error.ts";
import { runIp } from "./run-ip.ts";

/**
 * The lab needs root (it creates network namespaces, veths and bridges) and `ip netns` (iproute2)
 * on Linux; a LabUnavailable error says which is missing and what to do.
 */
export async function checkLabAvailable(): Promise<void> {
  if (process.platform !== "linux") {
    throw new LabError(`the lab needs Linux network namespaces; this is ${process.platform}`, {
      code: "LabUnavailable",
    });
  }
  if (process.getuid?.() !== 0) {
    throw new LabError(
      "the lab creates network namespaces and needs root: run it as root (sudo netstress lab up)",
      {
        code: "LabUnavailable",
      },
    );
  }
  try {
    await runIp(["netns", "list"]);
  } catch (error) {
    throw new LabError(
      "the lab needs `ip netns` (iproute2) and network namespaces, which this machine does not offer",
      {
        code: "LabUnavailable",
        cause: error,
      },
    );
  }
}
