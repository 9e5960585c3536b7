import { z } from "zod";
import type { AllowedReleases } from "../commands/allowed-releases.ts";

const list = z.string().transform((text) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

const GiB = 1024 ** 3;

/** Where OpenShift's released and CI-built release images live. */
export const DEFAULT_RELEASE_REPOSITORIES = [
  "quay.io/openshift-release-dev/ocp-release",
  "registry.ci.openshift.org/ocp/release",
];

const REPOSITORY = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/;
const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Registries a bot reads by default: where OpenShift payloads and CI images live. Repository
 * configuration can name any pullspec, so anything else is the operator's to allow.
 */
export const DEFAULT_ALLOWED_REGISTRIES = [
  "quay.io",
  "registry.ci.openshift.org",
  "*.ci.openshift.org",
  "registry.redhat.io",
];

/** How the bot reads images: which registries and layouts, and what one plan may cost. */
export const registryEnvSchema = z.looseObject({
  NETSTRESS_ALLOWED_REGISTRIES: list
    .default(DEFAULT_ALLOWED_REGISTRIES)
    .describe(
      `comma-separated registries (host or host:port; *.domain for its subdomains) images are read from (default: ${DEFAULT_ALLOWED_REGISTRIES.join(", ")}); the default payload's and PR image's registries are always allowed`,
    ),
  NETSTRESS_REGISTRY_ALLOW_LOOPBACK: z
    .enum(["true", "false"])
    .default("false")
    .describe(
      "true: registries on loopback addresses may be read (a registry on the bot's host, tests); private, link-local and metadata addresses never are",
    ),
  NETSTRESS_OCI_LAYOUT_DIRS: list
    .default([])
    .describe(
      "comma-separated directories OCI layouts (oci:DIR) may be read from; the default payload's and PR image's layouts are always allowed",
    ),
  NETSTRESS_MAX_LAYER_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(2 * GiB)
    .describe("decompressed size at which an image layer is refused"),
  NETSTRESS_PLAN_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(16 * GiB)
    .describe("bytes one plan may read from registries (manifests, layers, binaries) before it fails"),
  NETSTRESS_PR_PAYLOAD_REPOSITORY: z
    .string()
    .regex(
      /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/,
      "a registry repository alone (host/path, e.g. quay.io/org/pr-payloads): no tag, digest or oci: layout",
    )
    .optional()
    .describe(
      "where PR payloads the bot assembles are pushed, by digest (the bot's registry credentials need push rights there); its registry is allowed like the default payload's",
    ),
  NETSTRESS_RELEASE_REPOSITORIES: list
    .pipe(
      z.array(
        z
          .string()
          .regex(
            REPOSITORY,
            "a registry repository alone (host/path, e.g. quay.io/openshift-release-dev/ocp-release)",
          ),
      ),
    )
    .default(DEFAULT_RELEASE_REPOSITORIES)
    .describe(
      `comma-separated registry repositories whose images are releases upgrade-from= may name, by tag or digest (default: ${DEFAULT_RELEASE_REPOSITORIES.join(", ")})`,
    ),
  NETSTRESS_RELEASE_STREAMS: list
    .pipe(
      z.array(
        z
          .string()
          .transform((entry) => {
            const [name = "", stream = name] = entry.split("=", 2).map((part) => part.trim());
            return { name, stream };
          })
          .refine((s) => STREAM_NAME.test(s.name) && STREAM_NAME.test(s.stream), {
            message: "NAME=STREAM or STREAM, e.g. 4.19=4.19.0-0.nightly (letters, digits, . _ -)",
          }),
      ),
    )
    .default([])
    .describe(
      "comma-separated release-controller streams upgrade-from= may name, as NAME=STREAM (upgrade-from=4.19 for 4.19=4.19.0-0.nightly) or STREAM; the stream's latest release is used",
    ),
  NETSTRESS_PLAN_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .max(3600)
    .default(600)
    .describe(
      "seconds one plan may take, every request and retry included (the resolve stage stops at 10 minutes in any case)",
    ),
});

export interface RegistrySettings {
  allowedRegistries: string[];
  allowLoopback: boolean;
  layoutDirs: string[];
  maxLayerBytes: number;
  planBudget: { maxBytes: number; timeoutMs: number };
  /** Where assembled PR payloads are pushed; absent: only published ones (pr_payload) can be used. */
  prPayloadRepository?: string;
  /** What an upgrade run may start from (upgrade-from=): nothing else is ever installed on a commenter's word. */
  releases: AllowedReleases;
}

export function registrySettingsFrom(e: z.infer<typeof registryEnvSchema>): RegistrySettings {
  return {
    allowedRegistries: e.NETSTRESS_ALLOWED_REGISTRIES,
    allowLoopback: e.NETSTRESS_REGISTRY_ALLOW_LOOPBACK === "true",
    layoutDirs: e.NETSTRESS_OCI_LAYOUT_DIRS,
    maxLayerBytes: e.NETSTRESS_MAX_LAYER_BYTES,
    planBudget: { maxBytes: e.NETSTRESS_PLAN_MAX_BYTES, timeoutMs: e.NETSTRESS_PLAN_TIMEOUT_SECONDS * 1000 },
    ...(e.NETSTRESS_PR_PAYLOAD_REPOSITORY ? { prPayloadRepository: e.NETSTRESS_PR_PAYLOAD_REPOSITORY } : {}),
    releases: { repositories: e.NETSTRESS_RELEASE_REPOSITORIES, streams: e.NETSTRESS_RELEASE_STREAMS },
  };
}

/** The settings of a bot whose environment says nothing about registries. */
export const DEFAULT_REGISTRY_SETTINGS: RegistrySettings = registrySettingsFrom(registryEnvSchema.parse({}));
