/**
 * JSON Schemas for editors (yaml-language-server, VS Code), generated from the zod schema so they
 * cannot drift from what resgen accepts. `npm run schema` writes them to schema/; a test fails
 * when the committed files are out of date.
 */
import { z } from "zod";
import { Policy, ProjectConfig } from "./schema.js";
import { Service } from "./service-schema.js";
import { rawUrl } from "../version.js";

function toJson(schema: z.ZodType, id: string): string {
  const json = z.toJSONSchema(schema, {
    target: "draft-7",
    io: "input",
    unrepresentable: "any",
    cycles: "ref",
  });
  return JSON.stringify({ ...json, $id: id }, null, 2) + "\n";
}

export const JSON_SCHEMAS: Readonly<Record<string, () => string>> = {
  "policy.schema.json": () => toJson(Policy, rawUrl("schema/policy.schema.json")),
  "project.schema.json": () => toJson(ProjectConfig, rawUrl("schema/project.schema.json")),
  "service.schema.json": () => toJson(Service, rawUrl("schema/service.schema.json")),
};
