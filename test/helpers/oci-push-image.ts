import type { Blob, ImageBundle } from "../../examples/payload/oci-image-builder.ts";

/**
 * Pushes an image or index to a distribution registry over its HTTP API (monolithic blob uploads),
 * then tags the top manifest. Basic credentials when the registry demands them.
 */
export async function pushImage(options: {
  url: string;
  repository: string;
  tag: string;
  image: ImageBundle;
  auth?: { username: string; password: string };
}): Promise<void> {
  const base = `${options.url}/v2/${options.repository}`;
  const authorization: Record<string, string> = options.auth
    ? {
        authorization: `Basic ${Buffer.from(`${options.auth.username}:${options.auth.password}`).toString("base64")}`,
      }
    : {};
  const check = async (response: Response, what: string) => {
    if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${await response.text()}`);
  };
  const pushed = new Set<string>();
  for (const blob of options.image.blobs) {
    if (pushed.has(blob.digest)) continue;
    pushed.add(blob.digest);
    const head = await fetch(`${base}/blobs/${blob.digest}`, { method: "HEAD", headers: authorization });
    if (head.ok) continue;
    const start = await fetch(`${base}/blobs/uploads/`, { method: "POST", headers: authorization });
    await check(start, `start upload of ${blob.digest}`);
    const location = new URL(start.headers.get("location") ?? "", options.url);
    location.searchParams.set("digest", blob.digest);
    const put = await fetch(location, {
      method: "PUT",
      headers: { ...authorization, "content-type": "application/octet-stream" },
      body: blob.bytes,
    });
    await check(put, `upload of ${blob.digest}`);
  }
  const putManifest = async (manifest: Blob, reference: string) =>
    check(
      await fetch(`${base}/manifests/${reference}`, {
        method: "PUT",
        headers: { ...authorization, "content-type": manifest.mediaType },
        body: manifest.bytes,
      }),
      `manifest ${reference}`,
    );
  for (const child of options.image.children) await putManifest(child, child.digest);
  await putManifest(options.image.manifest, options.tag);
}
