import { z } from "zod";

/** Names a release stream may have (they become part of Redis keys and URLs). */
export const streamNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][\w.-]{0,99}$/, "a release stream name: letters, digits, '.', '-' and '_'")
  .meta({ example: "4.19.0-0.nightly" });
