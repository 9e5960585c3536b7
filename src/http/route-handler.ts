import type { ApplicationFunctionOptions } from "probot";

/** A handler of the bot's HTTP server beside the webhooks: true when it answered the request. */
export type RouteHandler = Parameters<ApplicationFunctionOptions["addHandler"]>[0];
