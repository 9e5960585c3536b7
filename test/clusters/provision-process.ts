// A bot process that starts provisioning clusters under test and is then killed with SIGKILL.
import { Redis } from "ioredis";
import { acquireArm, hiveProvider, request } from "./hive-fixture.ts";

const redis = new Redis(process.env.REDIS_URL!);
const clusters = hiveProvider({
  hubKubeconfig: process.env.HUB_KUBECONFIG!,
  redis,
  prefix: process.env.PREFIX!,
});
void acquireArm(clusters, request({ runId: "active", count: 3 })).catch(() => undefined);
void acquireArm(clusters, request({ runId: "ended", count: 2 })).catch(() => undefined);
process.stdout.write("provisioning\n");
