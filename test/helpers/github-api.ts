import nock from "nock";
import type { WebhookDeliveryLog } from "./github-deliveries.ts";
import { HEAD_SHA, OWNER, REPO } from "./github-payloads.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  at: number;
}

export interface FakeGitHubOptions {
  /** Text of .github/network-stress.yml on the default branch; undefined: no such file. */
  config?: string;
  /** Org members (everyone else is not a member). */
  members?: string[];
  /** Collaborator permission per login (default "read"). */
  permissions?: Record<string, string>;
  pull?: { author?: string; labels?: string[]; draft?: boolean; state?: string; headSha?: string };
  files?: string[];
  baseUrl?: string;
  /** Check-run writes are refused as GitHub refuses an installation without this permission (e.g. checks=write). */
  missingPermission?: string;
  /** Serves the app webhook deliveries API from this log, redelivering to `webhookUrl`. */
  deliveries?: { log: WebhookDeliveryLog; webhookUrl: string; appId: number };
}

/**
 * GitHub at the HTTP boundary (nock): answers what the bot reads and records what it writes (check
 * runs, comments, labels), giving check runs increasing ids. Call `done()` in afterEach.
 */
export function fakeGitHub(options: FakeGitHubOptions = {}) {
  const writes: RecordedRequest[] = [];
  let outage = false;
  let refused = 0;
  let deliveryListings = 0;
  const refuse = () => {
    refused++;
    return [
      403,
      {
        message: "Resource not accessible by integration",
        documentation_url: "https://docs.github.com/rest/checks/runs",
        status: "403",
      },
      { "x-accepted-github-permissions": options.missingPermission! },
    ] as const;
  };
  const repoPath = `/repos/${OWNER.login}/${REPO}`;
  let nextCheckRunId = 1000;
  const pull = {
    author: "alice",
    labels: [] as string[],
    draft: false,
    state: "open",
    headSha: HEAD_SHA,
    ...options.pull,
  };
  const record = (method: string) =>
    function (this: unknown, path: string, body: unknown) {
      writes.push({ method, path, body: (body ?? {}) as Record<string, unknown>, at: Date.now() });
    };
  const scope = nock(options.baseUrl ?? "https://api.github.com")
    .persist()
    .post(/^\/app\/installations\/\d+\/access_tokens$/)
    .reply(201, { token: "installation-token", expires_at: new Date(Date.now() + 3_600_000).toISOString() })
    .get(`${repoPath}/contents/.github%2Fnetwork-stress.yml`)
    .reply(() => (options.config === undefined ? [404, { message: "Not Found" }] : [200, options.config]))
    .get(/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+$/)
    .reply((uri) => [
      200,
      {
        number: Number(uri.split("/").pop()),
        state: pull.state,
        draft: pull.draft,
        head: { sha: pull.headSha },
        user: { login: pull.author, type: "User" },
        labels: pull.labels.map((name) => ({ name })),
      },
    ])
    .get(/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/files/)
    .reply(
      200,
      (options.files ?? []).map((filename) => ({ filename, status: "modified" })),
    )
    .get(/^\/orgs\/[^/]+\/members\/[^/]+$/)
    .reply((uri) => [(options.members ?? []).includes(uri.split("/").pop()!) ? 204 : 404, ""])
    .get(/^\/repos\/[^/]+\/[^/]+\/collaborators\/[^/]+\/permission$/)
    .reply((uri) => [200, { permission: options.permissions?.[uri.split("/").at(-2)!] ?? "read" }])
    .post(`${repoPath}/check-runs`)
    .reply(function (path, body) {
      if (options.missingPermission) return refuse();
      if (outage) return [503, { message: "Service Unavailable" }];
      record("POST").call(this, path, body);
      return [201, { id: nextCheckRunId++ }];
    })
    .patch(/^\/repos\/[^/]+\/[^/]+\/check-runs\/\d+$/)
    .reply(function (path, body) {
      if (options.missingPermission) return refuse();
      if (outage) return [503, { message: "Service Unavailable" }];
      record("PATCH").call(this, path, body);
      return [200, { id: Number(path.split("/").pop()) }];
    })
    .post(/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/)
    .reply(function (path, body) {
      record("POST").call(this, path, body);
      return [201, { id: 1 }];
    })
    .post(/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/labels$/)
    .reply(function (path, body) {
      record("POST").call(this, path, body);
      return [200, []];
    })
    .delete(/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/labels\/[^/]+$/)
    .reply(function (path, body) {
      record("DELETE").call(this, path, body);
      return [200, []];
    });

  const deliveries = options.deliveries;
  if (deliveries) {
    // Only the app itself (a JWT it signed: iss is its id) may read and redeliver its deliveries.
    const asApp = (authorization: string | undefined) => {
      const [scheme, jwt] = (authorization ?? "").split(" ");
      if (scheme?.toLowerCase() !== "bearer" || !jwt) return false;
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()) as {
        iss?: unknown;
      };
      return String(claims.iss) === String(deliveries.appId);
    };
    const unauthorized = [401, { message: "A JSON web token could not be decoded" }] as const;
    scope
      .get(/^\/app\/hook\/deliveries(\?.*)?$/)
      .reply(function (uri) {
        if (!asApp(this.req.headers.authorization)) return unauthorized;
        deliveryListings += 1;
        const query = new URL(uri, "https://api.github.com").searchParams;
        const perPage = Number(query.get("per_page") ?? 30);
        const all = deliveries.log.attempts();
        const start = Number(query.get("cursor") ?? 0);
        const page = all.slice(start, start + perPage);
        const next = start + perPage < all.length ? start + perPage : undefined;
        const link =
          next === undefined
            ? {}
            : {
                link: `<https://api.github.com/app/hook/deliveries?per_page=${perPage}&cursor=${next}>; rel="next"`,
              };
        return [200, page, link];
      })
      .post(/^\/app\/hook\/deliveries\/\d+\/attempts$/)
      .reply(function (uri) {
        if (!asApp(this.req.headers.authorization)) return unauthorized;
        // GitHub accepts the request and delivers afterwards.
        const redelivered = deliveries.log.redeliver(deliveries.webhookUrl, Number(uri.split("/").at(-2)));
        return redelivered ? [202, {}] : [404, { message: "Not Found" }];
      });
  }

  return {
    writes,
    pull,
    /** While on, every check-run write gets 503 (a GitHub outage). */
    setOutage(on: boolean) {
      outage = on;
    },
    /** Pages of the app's deliveries read: each sweep for missed deliveries reads one or more. */
    deliveryListings: () => deliveryListings,
    /** Check-run writes refused for the missing permission. */
    refusedWrites: () => refused,
    comments: () => writes.filter((w) => w.path.endsWith("/comments")).map((w) => String(w.body.body)),
    checkRunWrites: () => writes.filter((w) => w.path.includes("/check-runs")),
    /** The last write to each check run, by check run id. */
    latestCheckRuns(): Map<number, Record<string, unknown>> {
      const latest = new Map<number, Record<string, unknown>>();
      let created = 1000;
      for (const w of writes) {
        if (w.method === "POST" && w.path.endsWith("/check-runs")) latest.set(created++, w.body);
        else if (w.method === "PATCH") {
          const id = Number(w.path.split("/").pop());
          latest.set(id, { ...latest.get(id), ...w.body });
        }
      }
      return latest;
    },
    stop() {
      scope.persist(false);
      nock.cleanAll();
    },
  };
}
export type FakeGitHub = ReturnType<typeof fakeGitHub>;

/** Polls until `check` returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
