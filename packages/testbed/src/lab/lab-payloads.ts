import { createHash } from "node:crypto";
import type { AgentBuild } from "./run-node-agent.ts";

const digest = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** One build of the lab's network plugin and the release payload that carries it. */
export interface LabPayload {
  build: AgentBuild;
  /** The release image ClusterVersion reports (and `spec.desiredUpdate.image` names). */
  payload: string;
  version: string;
  /** The `ovnkube-node` image of that build. */
  agentImage: string;
  commit: string;
}

/** The lab's two payloads: the released one and the PR one, whose node agent has the restart bug. */
export const LAB_PAYLOADS: Record<AgentBuild, LabPayload> = {
  released: {
    build: "released",
    payload: `quay.io/netstress/lab-release@${digest("lab-release-released")}`,
    version: "4.20.0",
    agentImage: `quay.io/netstress/lab-ovn-kubernetes@${digest("lab-ovn-kubernetes-released")}`,
    commit: createHash("sha1").update("released").digest("hex"),
  },
  pr: {
    build: "pr",
    payload: `quay.io/netstress/lab-release@${digest("lab-release-pr")}`,
    version: "4.20.0-0.pr",
    agentImage: `quay.io/netstress/lab-ovn-kubernetes@${digest("lab-ovn-kubernetes-pr")}`,
    commit: createHash("sha1").update("pr").digest("hex"),
  },
};
