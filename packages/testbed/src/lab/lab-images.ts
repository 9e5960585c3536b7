import type { FakeImage } from "../sim/start-fake-kube-api.ts";
import { LAB_PAYLOADS } from "./lab-payloads.ts";
import { NETSTRESS_BIN } from "./spawn-lab-process.ts";

/** A program an image runs: its command, the host command line it stands for, and the arguments it takes. */
interface LabProgram {
  command: string;
  argv: string[];
  /** The arguments a container gives it start with these; `exact`: and have nothing after them. */
  args: string[];
  exact: boolean;
}

const shown = (words: readonly string[]) => {
  const text = words.join(" ");
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
};

function imageOf(programs: LabProgram[]): FakeImage {
  return {
    commands: Object.fromEntries(programs.map((p) => [p.command, p.argv])),
    refuse: (command, args) => {
      const program = programs.find((p) => p.command === command);
      const given = args.slice(0, program?.args.length ?? 0);
      const admitted =
        program !== undefined &&
        program.args.every((arg, i) => given[i] === arg) &&
        (!program.exact || args.length === program.args.length);
      if (admitted) return undefined;
      const allowed = programs.map((p) => `"${shown([p.command, ...p.args])}${p.exact ? "" : " …"}"`);
      return `the lab runs only its own programs as root: this image runs ${allowed.join(", ")}, not "${shown([command, ...args])}"`;
    },
  };
}

/**
 * What the lab's kubelet can run, as root: the lab's own programs and nothing else — the probe
 * image's `netstress ext probe-server …` (the network extension's probe pods) and each agent
 * build's `ovnkube` and `ovnkube-control-plane` (its DaemonSets). Any other command line is
 * refused: the pod fails with reason CommandNotAllowed and a message naming what the image runs.
 */
export function labImages(probeImage: string): Record<string, FakeImage> {
  const netstress = [process.execPath, NETSTRESS_BIN];
  return {
    [probeImage]: imageOf([
      { command: "netstress", argv: netstress, args: ["ext", "probe-server"], exact: false },
    ]),
    ...Object.fromEntries(
      Object.values(LAB_PAYLOADS).map((p) => [
        p.agentImage,
        imageOf([
          {
            command: "ovnkube",
            argv: [...netstress, "lab", "agent", "--build", p.build],
            args: [],
            exact: true,
          },
          {
            command: "ovnkube-control-plane",
            argv: [...netstress, "lab", "control-plane"],
            args: [],
            exact: true,
          },
        ]),
      ]),
    ),
  };
}
