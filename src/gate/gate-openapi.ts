import { z } from "zod";
import { gateArchSchema, gateRequestSchema, gateSchema, problemSchema } from "./gate-schemas.ts";

const json = (schema: string) => ({
  "application/json": { schema: { $ref: `#/components/schemas/${schema}` } },
});
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": json("Problem")["application/json"] },
});

/**
 * The gate API's OpenAPI 3.1 document, built from the zod schemas the handlers validate with, so
 * the document cannot drift from the code; docs/gate-api.openapi.json is a copy kept current by a test.
 */
export function gateOpenApiDocument(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(gateRequestSchema, { id: "GateRequest" });
  registry.add(gateSchema, { id: "Gate" });
  registry.add(gateArchSchema, { id: "GateArch" });
  registry.add(problemSchema, { id: "Problem" });
  const { schemas } = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    io: "input",
    unrepresentable: "any",
  });
  const unauthorized = problem("No bearer token, or not a valid one");
  return {
    openapi: "3.1.0",
    info: {
      title: "network-stress-bot release-payload gate",
      version: "1",
      description:
        "Starts stress runs of a candidate release payload against a baseline payload, per architecture, and reports per-arch verdicts: Accepted, Rejected or Inconclusive. Identical requests made while a gate is active get that gate.",
    },
    security: [{ bearer: [] }],
    paths: {
      "/api/v1/gates": {
        post: {
          operationId: "startGate",
          summary: "Start a gating run (or join the identical active one)",
          requestBody: { required: true, content: json("GateRequest") },
          responses: {
            "202": {
              description: "A new gate was started",
              headers: { Location: { schema: { type: "string" } } },
              content: json("Gate"),
            },
            "200": {
              description: "An identical gate is active: this is it",
              headers: { Location: { schema: { type: "string" } } },
              content: json("Gate"),
            },
            "400": problem("The body is not JSON or not a gate request"),
            "401": unauthorized,
            "413": problem("The body is too large"),
            "422": problem("The release stream is unknown to the release-controller"),
            "502": problem("The release-controller could not be asked"),
            "503": problem(
              "The gate's runs may not all be queued (send the request again: it joins the gate and queues them), or the gate expired while it was read",
            ),
          },
        },
      },
      "/api/v1/gates/{id}": {
        get: {
          operationId: "getGate",
          summary: "A gate's state, per-arch verdicts with reasons, and report links",
          parameters: [
            { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[0-9a-f]{32}$" } },
          ],
          responses: {
            "200": { description: "The gate", content: json("Gate") },
            "401": unauthorized,
            "404": problem("No such gate"),
          },
        },
      },
      "/api/v1/openapi.json": {
        get: {
          operationId: "getOpenApi",
          summary: "This document",
          security: [],
          responses: { "200": { description: "The OpenAPI document", content: { "application/json": {} } } },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A token from the bot's gate-tokens secret" },
      },
    },
  };
}
