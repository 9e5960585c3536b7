import type { Arch } from "../arch/arch.ts";
import { archSchema } from "../arch/arch.ts";
import { streamNameSchema } from "../config/stream-name.ts";
import type { RouteHandler } from "../http/route-handler.ts";
import { REPORT_POLICY, send } from "../http/send.ts";
import { renderTrendPage } from "../report/trend-page.ts";
import { loadTrendPageAssets } from "../report/trend-page-assets.ts";
import type { TrendView } from "../report/trend-view.ts";

/**
 * `/streams/<stream>/<arch>`: the trend page of a release stream on an arch, served as the run
 * reports are (self-contained, under the report's Content-Security-Policy, on the public port).
 */
export function createTrendRoutes(options: {
  trends: (input: { stream: string; arch: Arch }) => Promise<TrendView>;
}): RouteHandler {
  const text = "text/plain; charset=utf-8";
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
    const view = await options.trends({ stream, arch: parsedArch.data });
    if (view.payloads.length === 0) {
      return send(
        res,
        404,
        text,
        `no payload of ${stream} on ${parsedArch.data} in the history yet: release periodics and accepted gates add them\n`,
      );
    }
    const page = renderTrendPage({ view, assets: await loadTrendPageAssets() });
    return send(res, 200, "text/html; charset=utf-8", page, { "content-security-policy": REPORT_POLICY });
  };
}
