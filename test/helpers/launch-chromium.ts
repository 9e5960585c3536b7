import { chromium, type Browser } from "playwright-core";

/**
 * The system's Chromium (scripts/install-system-deps.sh installs it), headless and quiet: no sandbox
 * (tests may run as root), no GPU, and none of its own traffic (updates, sync, QUIC), so a test that
 * watches a page's requests sees only the page's.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
