import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { parse } from "yaml";
import { z } from "zod";
import { LabError } from "./lab-error.ts";

const kubeconfigSchema = z.object({
  clusters: z.array(
    z.object({ cluster: z.object({ server: z.string(), "certificate-authority-data": z.string() }) }),
  ),
  users: z.array(z.object({ user: z.object({ token: z.string() }) })),
});

/** Reads JSON from the lab's API server (GET), with the token and CA of a kubeconfig. */
export type LabApiGet = <T>(path: string) => Promise<T>;

/**
 * The few reads the lab's own programs (node agent, Service proxy) make of the API server, from
 * inside the lab's namespaces, with the kubeconfig the lab gives them (`KUBECONFIG`): plain HTTPS
 * GETs that time out after 5 s, so that a program outlives an API outage and retries.
 */
export function labApiClient(kubeconfigPath: string): LabApiGet {
  const parsed = kubeconfigSchema.safeParse(parse(readFileSync(kubeconfigPath, "utf8")));
  if (!parsed.success) {
    throw new LabError(
      `${kubeconfigPath} is not a lab kubeconfig (server, CA data, token): ${parsed.error.message}`,
      {
        code: "BadLabOptions",
      },
    );
  }
  const cluster = parsed.data.clusters[0]!.cluster;
  const token = parsed.data.users[0]!.user.token;
  const ca = Buffer.from(cluster["certificate-authority-data"], "base64");
  const agent = new Agent({ keepAlive: true, ca });
  return <T>(path: string) =>
    new Promise<T>((resolve, reject) => {
      const req = request(
        new URL(path, cluster.server),
        { agent, headers: { authorization: `Bearer ${token}`, accept: "application/json" }, timeout: 5000 },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => {
            if (res.statusCode !== 200)
              return reject(new Error(`GET ${path}: HTTP ${res.statusCode}: ${body}`));
            try {
              resolve(JSON.parse(body) as T);
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`GET ${path}: no answer in 5 s`)));
      req.on("error", reject);
      req.end();
    });
}
