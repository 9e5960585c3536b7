import { describe, expect, it } from "vitest";
import { missedDeliveries } from "../../src/app/missed-deliveries.ts";
import type { HookDelivery } from "../../src/github/app-webhook-deliveries.ts";

const attempt = (
  id: number,
  guid: string,
  status_code: number,
  at = "2026-12-01T10:00:00Z",
): HookDelivery => ({
  id,
  guid,
  delivered_at: at,
  redelivery: false,
  status: status_code === 200 ? "OK" : "failed to connect",
  status_code,
  event: "pull_request",
  action: "synchronize",
});

describe("which deliveries were missed", () => {
  it("recovers events no attempt reached, oldest first, and leaves those the bot answered or refused", () => {
    // Newest first, as GitHub lists them; three attempts in one second.
    const listed = [
      attempt(6, "refused", 400),
      attempt(5, "late-5xx", 502),
      attempt(4, "redelivered", 200),
      attempt(3, "redelivered", 0),
      attempt(2, "down-second", 0),
      attempt(1, "down-first", 0),
    ];
    expect(missedDeliveries(listed).map((m) => [m.guid, m.deliveryId])).toEqual([
      ["down-first", 1],
      ["down-second", 2],
      ["late-5xx", 5],
    ]);
  });
});
