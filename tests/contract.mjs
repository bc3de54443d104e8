//! The HTTP contract (openapi.yaml) for tests: the parsed document, a validator of any of its
//! component schemas (Ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1 and 3.2), and the
//! routes of worker/src/router.rs read from the source.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import YAML from "yaml";

const ROOT = new URL("../", import.meta.url).pathname;

/** openapi.yaml as an object. */
export const contract = YAML.parse(readFileSync(`${ROOT}openapi.yaml`, "utf8"));

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: "openapi", components: contract.components }, "openapi");

/** Compiles `components.schemas[name]` (throws when it is not a valid schema). */
export function compileSchema(name) {
  if (!ajv.getSchema(`openapi#/components/schemas/${name}`)) throw new Error(`openapi.yaml has no schema ${name}`);
}

/** Throws with Ajv's errors unless `value` matches `components.schemas[name]`. */
export function assertSchema(name, value) {
  const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
  if (!validate) throw new Error(`openapi.yaml has no schema ${name}`);
  if (!validate(value)) {
    throw new Error(`${name} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
  }
}

/** The routes the Worker answers, as `METHOD /path/{param}`, read from the router's match arms
 * (a guarded arm counts). */
export function routerRoutes() {
  const source = readFileSync(`${ROOT}worker/src/router.rs`, "utf8").replace(/\s+/g, " ");
  const routes = new Set();
  for (const [, method, segments] of source.matchAll(/\( ?Method::(\w+), ?\[ ?([^\]]*)\],? ?\)(?: if [^=]*)? =>/g)) {
    const path = segments.split(",").map((s) => s.trim()).filter(Boolean)
      .map((s) => (s.startsWith('"') ? s.slice(1, -1) : `{${s}}`));
    routes.add(`${method.toUpperCase()} /${path.join("/")}`);
  }
  return routes;
}

/** The operations of openapi.yaml that the Worker answers, as `METHOD /path/{param}` (static
 * files, marked `x-served-by: assets`, are left out). */
export function contractRoutes() {
  const methods = ["get", "put", "post", "delete", "patch"];
  return new Set(Object.entries(contract.paths).flatMap(([path, item]) =>
    methods.filter((m) => item[m] && item[m]["x-served-by"] !== "assets").map((m) => `${m.toUpperCase()} ${path}`)));
}
