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

/** An answer other than 2xx from the lab's API server (its HTTP status, for 404 and 409 handling). */
export class LabApiStatusError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Calls the lab's API server (GET by default; a JSON body for POST and PUT) and parses the answer. */
export type LabApiGet = <T>(
  path: string,
  init?: { method: "GET" | "POST" | "PUT"; body?: unknown },
) => Promise<T>;

/**
 * The few calls the lab's own programs (node agent, Service proxy, control plane) make to the API
 * server, from inside the lab's namespaces, with the kubeconfig the lab gives them (`KUBECONFIG`):
 * plain HTTPS requests that time out after 5 s, so that a program outlives an API outage and retries.
 */
export function labApiClient(kubeconfigPath: string): LabApiGet {
  const parsed = kubeconfigSchema.safeParse(parse(readFileSync(kubeconfigPath, "utf8")));
  if (!parsed.success) {
    throw new LabError(
      `${kubeconfigPath} is not a lab kubeconfig (server, CA data, token): ${parsed.error.message}`,
      { code: "BadLabOptions" },
    );
  }
  const cluster = parsed.data.clusters[0]!.cluster;
  const token = parsed.data.users[0]!.user.token;
  const ca = Buffer.from(cluster["certificate-authority-data"], "base64");
  const agent = new Agent({ keepAlive: true, ca });
  return <T>(path: string, init?: { method: "GET" | "POST" | "PUT"; body?: unknown }) =>
    new Promise<T>((resolve, reject) => {
      const method = init?.method ?? "GET";
      const req = request(
        new URL(path, cluster.server),
        {
          agent,
          method,
          headers: {
            authorization: `Bearer ${token}`,
            accept: "application/json",
            ...(init?.body === undefined ? {} : { "content-type": "application/json" }),
          },
          timeout: 5000,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) {
              return reject(new LabApiStatusError(`${method} ${path}: HTTP ${status}: ${body}`, status));
            }
            try {
              resolve(JSON.parse(body) as T);
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 5 s`)));
      req.on("error", reject);
      req.end(init?.body === undefined ? undefined : JSON.stringify(init.body));
    });
}
