// A bot process that starts provisioning clusters under test and is then killed with SIGKILL.
import { Redis } from "ioredis";
import { hiveProvider, request } from "./hive-fixture.ts";

const redis = new Redis(process.env.REDIS_URL!);
const clusters = hiveProvider({
  hubKubeconfig: process.env.HUB_KUBECONFIG!,
  redis,
  prefix: process.env.PREFIX!,
});
void clusters.acquire(request({ runId: "active", count: 3 })).catch(() => undefined);
void clusters.acquire(request({ runId: "ended", count: 2 })).catch(() => undefined);
process.stdout.write("provisioning\n");
