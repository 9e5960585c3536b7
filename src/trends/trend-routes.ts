import type { Arch } from "@netstress/core/arch/arch.ts";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { streamNameSchema } from "../config/stream-name.ts";
import type { RouteHandler } from "../http/route-handler.ts";
import { REPORT_POLICY, send } from "../http/send.ts";
import { renderTrendPage } from "../report/trend-page.ts";
import { loadTrendPageAssets } from "../report/trend-page-assets.ts";
import type { StoredTrendView } from "./stored-trend-views.ts";

/**
 * `/streams/<stream>/<arch>`: the trend page of a release stream on an arch, served as the run
 * reports are (self-contained, under the report's Content-Security-Policy, on the public port).
 * It serves a stored view (createStoredTrendViews), or says that one is being computed.
 */
export function createTrendRoutes(options: {
  views: (input: { stream: string; arch: Arch }) => Promise<StoredTrendView>;
}): RouteHandler {
  const text = "text/plain; charset=utf-8";
  /** Each stored view is rendered once: a page of a thousand tests is not rebuilt per request. */
  const pages = new WeakMap<object, string>();
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const match = /^\/streams\/([^/]+)\/([^/]+)$/.exec(new URL(req.url ?? "/", "http://bot").pathname);
    if (!match) return false;
    let stream: string;
    let arch: string;
    try {
      stream = decodeURIComponent(match[1]!);
      arch = decodeURIComponent(match[2]!);
    } catch {
      return send(res, 400, text, "the path is not valid percent-encoding\n");
    }
    if (!streamNameSchema.safeParse(stream).success) {
      return send(
        res,
        400,
        text,
        `"${stream}" is not a release stream name: letters, digits, '.', '-' and '_'\n`,
      );
    }
    const parsedArch = archSchema.safeParse(arch);
    if (!parsedArch.success) {
      return send(res, 400, text, `"${arch}" is not an arch: one of ${archSchema.options.join(", ")}\n`);
    }
    const stored = await options.views({ stream, arch: parsedArch.data });
    if (stored.kind === "computing") {
      return send(
        res,
        503,
        text,
        `the trends of ${stream} on ${parsedArch.data} are being computed; this page reloads itself\n`,
        { refresh: "5", "retry-after": "5" },
      );
    }
    if (stored.kind === "empty" || stored.view.payloads.length === 0) {
      return send(
        res,
        404,
        text,
        `no payload of ${stream} on ${parsedArch.data} in the history yet: release periodics and accepted gates add them\n`,
      );
    }
    const { view } = stored;
    let page = pages.get(view);
    if (page === undefined) {
      page = renderTrendPage({ view, assets: await loadTrendPageAssets() });
      pages.set(view, page);
    }
    return send(res, 200, "text/html; charset=utf-8", page, { "content-security-policy": REPORT_POLICY });
  };
}
