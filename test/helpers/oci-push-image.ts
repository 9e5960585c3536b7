import type { ImageBundle } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { createDistributionClient, type DistributionClient } from "../../src/registry/distribution-client.ts";

/**
 * Pushes an image or index to a distribution registry with the bot's own client (blobs the
 * repository lacks, the manifests under an index by digest), then tags the top manifest. Basic
 * credentials when the registry demands them.
 */
export async function pushImage(options: {
  url: string;
  repository: string;
  tag: string;
  image: ImageBundle;
  auth?: { username: string; password: string };
}): Promise<void> {
  const client = clientFor(options.auth);
  const ref = {
    kind: "registry" as const,
    registry: new URL(options.url).host,
    repository: options.repository,
  };
  const blobs = new Map(options.image.blobs.map((blob) => [blob.digest, blob]));
  await Promise.all(
    [...blobs.values()].map((blob) => client.pushBlob(ref, { ...blob, content: blob.bytes })),
  );
  for (const child of options.image.children)
    await client.putManifest({ ...ref, digest: child.digest }, child);
  await client.putManifest({ ...ref, tag: options.tag }, options.image.manifest);
}

/** One client per credentials, so that concurrent pushes of a shared layer go once (as in the bot). */
const clients = new Map<string, DistributionClient>();
function clientFor(auth: { username: string; password: string } | undefined): DistributionClient {
  const key = JSON.stringify(auth ?? null);
  let client = clients.get(key);
  if (!client) {
    client = createDistributionClient({ credentials: () => auth, retry: { retries: 2, backoffMs: 50 } });
    clients.set(key, client);
  }
  return client;
}
