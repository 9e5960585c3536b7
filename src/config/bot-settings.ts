import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { NetstressError } from "@netstress/core/errors/netstress-error.ts";
import { isLoopbackHost } from "../http/is-loopback-host.ts";
import { archSchema, hostArch } from "@netstress/core/arch/arch.ts";

const list = z.string().transform((text) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

const levels = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

export interface Quotas {
  activeRunsPerPullRequest: number;
  activeRunsPerRepository: number;
  activeRunsPerInstallation: number;
  /** Iterations × arches × clusters one request may ask for. */
  requestIterations: number;
  /** Clusters under test one PR's (one repository's) active runs may hold at once; absent: no cap. */
  clustersPerPullRequest?: number;
  clustersPerRepository?: number;
}

export const DEFAULT_QUOTAS: Quotas = {
  activeRunsPerPullRequest: 6,
  activeRunsPerRepository: 20,
  activeRunsPerInstallation: 50,
  requestIterations: 400,
};

/**
 * The bot's environment. Probot's standard names (APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH,
 * WEBHOOK_SECRET, PORT, HOST, LOG_LEVEL, GHE_HOST, GHE_PROTOCOL, WEBHOOK_PATH) plus the bot's own
 * NETSTRESS_* settings. The queue's Redis is NETSTRESS_REDIS_URL: Probot reads REDIS_URL for its
 * own purposes and must never receive a Redis configuration.
 */
export const botEnvSchema = z
  .looseObject({
    NODE_ENV: z.string().optional(),
    APP_ID: z.string().regex(/^\d+$/, "the numeric App ID from the app's settings page"),
    // Empty counts as unset: the web tier's manifest blanks the path it does not need.
    PRIVATE_KEY: z.string().optional(),
    PRIVATE_KEY_PATH: z.string().optional(),
    WEBHOOK_SECRET: z.string().min(1).optional(),
    // Empty counts as unset (an optional Secret key left blank).
    NETSTRESS_STREAM_SECRET: z
      .string()
      .refine((text) => text === "" || text.length >= 32, {
        message: "must be at least 32 characters (openssl rand -hex 32), or empty for the webhook secret",
      })
      .optional(),
    WEBHOOK_PATH: z.string().startsWith("/").default("/api/github/webhooks"),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    HOST: z.string().min(1).default("0.0.0.0"),
    NETSTRESS_INTERNAL_PORT: z.coerce.number().int().min(1).max(65535).default(9090),
    NETSTRESS_INTERNAL_HOST: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(levels).default("info"),
    GHE_HOST: z.string().min(1).optional(),
    GHE_PROTOCOL: z.enum(["https", "http"]).default("https"),
    NETSTRESS_REDIS_URL: z.url({ protocol: /^rediss?$/ }).default("redis://127.0.0.1:6379"),
    NETSTRESS_REDIS_USERNAME: z.string().min(1).optional(),
    NETSTRESS_REDIS_PASSWORD: z.string().min(1).optional(),
    NETSTRESS_QUEUE_PREFIX: z
      .string()
      .regex(/^[\w.-]+$/)
      .default("netstress"),
    NETSTRESS_PUBLIC_URL: z.url().optional(),
    NETSTRESS_DATA_DIR: z.string().min(1).default(".netstress"),
    NETSTRESS_TRUSTED_APPS: list.default([]),
    NETSTRESS_LOCAL_ARCHES: list.pipe(z.array(archSchema)).optional(),
    NETSTRESS_RUN_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
    NETSTRESS_MAX_ACTIVE_RUNS_PER_PR: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(DEFAULT_QUOTAS.activeRunsPerPullRequest),
    NETSTRESS_MAX_ACTIVE_RUNS_PER_REPOSITORY: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(DEFAULT_QUOTAS.activeRunsPerRepository),
    NETSTRESS_MAX_ACTIVE_RUNS_PER_INSTALLATION: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(DEFAULT_QUOTAS.activeRunsPerInstallation),
    NETSTRESS_MAX_REQUEST_ITERATIONS: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(DEFAULT_QUOTAS.requestIterations),
    NETSTRESS_MAX_CLUSTERS_PER_PR: z.coerce.number().int().min(1).max(10_000).optional(),
    NETSTRESS_MAX_CLUSTERS_PER_REPOSITORY: z.coerce.number().int().min(1).max(100_000).optional(),
    NETSTRESS_DEFAULT_PAYLOAD: z.string().min(1).optional(),
    NETSTRESS_DEFAULT_PR_IMAGE: z.string().min(1).optional(),
    NETSTRESS_DEFAULT_TAGS: list.default([]),
    NETSTRESS_SAMPLE_PAYLOAD: z.enum(["true", "false"]).default("false"),
    NETSTRESS_WORKERS: z.enum(["true", "false"]).default("true"),
  })
  .refine((env) => env.PRIVATE_KEY || env.PRIVATE_KEY_PATH || env.NETSTRESS_WORKERS === "false", {
    message:
      "set PRIVATE_KEY or PRIVATE_KEY_PATH (the app's private key, PEM); only a web tier (NETSTRESS_WORKERS=false) does without",
    path: ["PRIVATE_KEY"],
  })
  .refine((env) => env.WEBHOOK_SECRET, {
    message:
      "WEBHOOK_SECRET is required (the app's webhook secret; there is no default, not even in development)",
    path: ["WEBHOOK_SECRET"],
  })
  .refine(
    (env) =>
      env.NETSTRESS_REDIS_PASSWORD ||
      hasPassword(env.NETSTRESS_REDIS_URL) ||
      isLoopback(env.NETSTRESS_REDIS_URL),
    {
      message:
        "a Redis that is not on loopback needs a password: set NETSTRESS_REDIS_PASSWORD (from the netstress-redis Secret; docs/operations.md, Security)",
      path: ["NETSTRESS_REDIS_PASSWORD"],
    },
  );

function hasPassword(url: string): boolean {
  return new URL(url).password !== "";
}

function isLoopback(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/** The Redis URL with the credentials from their own settings (a Secret), which win over the URL's. */
function withRedisCredentials(
  url: string,
  username: string | undefined,
  password: string | undefined,
): string {
  if (!username && !password) return url;
  const parsed = new URL(url);
  if (username) parsed.username = encodeURIComponent(username);
  if (password) parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

export interface BotSettings {
  appId: number;
  /** Absent on a web tier: it calls no GitHub API (workers do). */
  privateKey?: string;
  webhookSecret: string;
  /**
   * What the build farm's record stream keys derive from (deriveStreamKey): NETSTRESS_STREAM_SECRET,
   * else the webhook secret. Changing it makes running Jobs' streams unverifiable (they run again).
   */
  streamSecret: string;
  /** Keys run ids, so that run page addresses are stable for a delivery and unguessable. */
  runIdSecret: string;
  webhookPath: string;
  port: number;
  host: string;
  /** Where /metrics and /runs are served: never the public port. */
  internalPort: number;
  internalHost: string;
  logLevel: (typeof levels)[number];
  /** GitHub's REST API; GitHub Enterprise Server when GHE_HOST is set. */
  githubBaseUrl: string;
  /** The queue's Redis, with its credentials: never log it. `rediss://` speaks TLS. */
  redisUrl: string;
  queuePrefix: string;
  /** Where check runs link to (the bot's run pages). */
  publicUrl: string;
  dataDir: string;
  trustedApps: string[];
  /** Architectures the embedded local executor runs; defaults to this machine's. */
  localArches: z.infer<typeof archSchema>[];
  runConcurrency: number;
  /** What one PR, repository and installation may have running, and how large one request may be. */
  quotas: Quotas;
  /**
   * What a repository without its own payload, pr_image and tags is tested with. These come from
   * the operator, so unlike repository configuration they may name local OCI layouts (oci:DIR).
   */
  defaults: { payload?: string; prImage?: string; tags: string[] };
  /** Build the bundled sample payload (an OCI layout) at start-up and use it as the default. */
  samplePayload: boolean;
  /** Whether this process also runs the queue workers (false: web only). */
  workers: boolean;
}

/** The environment cannot be used; the message names every problem. */
export class SettingsError extends NetstressError<"invalid-settings"> {
  override readonly name = "SettingsError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "invalid-settings", cause: options.cause });
  }
}

/** Reads and checks the bot's own environment; every problem is named in one error. */
export function loadBotSettings(
  env: NodeJS.ProcessEnv = process.env,
  readKey: (path: string) => string = (path) => readFileSync(path, "utf8"),
): BotSettings {
  const parsed = botEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "environment"}: ${i.message}`);
    throw new SettingsError(`the bot's settings are incomplete:\n${problems.join("\n")}`);
  }
  return botSettingsFrom(parsed.data, readKey);
}

/** The bot's settings from its parsed environment (reads the private key file when named). */
export function botSettingsFrom(
  e: z.infer<typeof botEnvSchema>,
  readKey: (path: string) => string = (path) => readFileSync(path, "utf8"),
): BotSettings {
  let privateKey = e.PRIVATE_KEY || undefined;
  if (!privateKey && e.PRIVATE_KEY_PATH) {
    try {
      privateKey = readKey(e.PRIVATE_KEY_PATH);
    } catch (cause) {
      throw new SettingsError(`PRIVATE_KEY_PATH ${e.PRIVATE_KEY_PATH} cannot be read`, { cause });
    }
  }
  const webhookSecret = e.WEBHOOK_SECRET!;
  return {
    appId: Number(e.APP_ID),
    // Keys pasted into an environment variable often carry literal "\n".
    ...(privateKey ? { privateKey: privateKey.replace(/\\n/g, "\n") } : {}),
    webhookSecret,
    streamSecret: e.NETSTRESS_STREAM_SECRET || webhookSecret,
    // Run ids (run page addresses) are keyed with a key of their own, derived from the webhook
    // secret: stable across restarts, unguessable without it, and never the secret itself.
    runIdSecret: createHmac("sha256", webhookSecret).update("netstress run ids").digest("hex"),
    webhookPath: e.WEBHOOK_PATH,
    port: e.PORT,
    host: e.HOST,
    internalPort: e.NETSTRESS_INTERNAL_PORT,
    internalHost: e.NETSTRESS_INTERNAL_HOST ?? e.HOST,
    logLevel: e.LOG_LEVEL,
    githubBaseUrl: e.GHE_HOST ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}/api/v3` : "https://api.github.com",
    redisUrl: withRedisCredentials(
      e.NETSTRESS_REDIS_URL,
      e.NETSTRESS_REDIS_USERNAME,
      e.NETSTRESS_REDIS_PASSWORD,
    ),
    queuePrefix: e.NETSTRESS_QUEUE_PREFIX,
    publicUrl: (e.NETSTRESS_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    dataDir: e.NETSTRESS_DATA_DIR,
    trustedApps: e.NETSTRESS_TRUSTED_APPS,
    localArches: e.NETSTRESS_LOCAL_ARCHES ?? [hostArch()],
    runConcurrency: e.NETSTRESS_RUN_CONCURRENCY,
    quotas: {
      activeRunsPerPullRequest: e.NETSTRESS_MAX_ACTIVE_RUNS_PER_PR,
      activeRunsPerRepository: e.NETSTRESS_MAX_ACTIVE_RUNS_PER_REPOSITORY,
      activeRunsPerInstallation: e.NETSTRESS_MAX_ACTIVE_RUNS_PER_INSTALLATION,
      requestIterations: e.NETSTRESS_MAX_REQUEST_ITERATIONS,
      ...(e.NETSTRESS_MAX_CLUSTERS_PER_PR ? { clustersPerPullRequest: e.NETSTRESS_MAX_CLUSTERS_PER_PR } : {}),
      ...(e.NETSTRESS_MAX_CLUSTERS_PER_REPOSITORY
        ? { clustersPerRepository: e.NETSTRESS_MAX_CLUSTERS_PER_REPOSITORY }
        : {}),
    },
    defaults: {
      ...(e.NETSTRESS_DEFAULT_PAYLOAD ? { payload: e.NETSTRESS_DEFAULT_PAYLOAD } : {}),
      ...(e.NETSTRESS_DEFAULT_PR_IMAGE ? { prImage: e.NETSTRESS_DEFAULT_PR_IMAGE } : {}),
      tags: e.NETSTRESS_DEFAULT_TAGS,
    },
    samplePayload: e.NETSTRESS_SAMPLE_PAYLOAD === "true",
    workers: e.NETSTRESS_WORKERS === "true",
  };
}
