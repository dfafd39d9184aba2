/**
 * Routes a method and path to an operation of the endpoint table. The emulator serves
 * the default table of src/service/endpoints.ts (disabled-by-default deletes included),
 * so client and emulator cannot drift apart on a path.
 */
import { DEFAULT_ENDPOINTS, ENDPOINT_NAMES, type EndpointName } from "../service/endpoints.js";

interface Route {
  name: EndpointName;
  method: string;
  pattern: RegExp;
  params: string[];
}

/** A routed request: the operation and its decoded path parameters. */
export interface RouteMatch {
  name: EndpointName;
  params: Record<string, string>;
}

function compile(name: EndpointName): Route {
  const { method, path } = DEFAULT_ENDPOINTS[name];
  const params: string[] = [];
  const source = path
    .split("/")
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      params.push(m[1] as string);
      return "([^/]+)";
    })
    .join("/");
  return { name, method, pattern: new RegExp(`^${source}$`), params };
}

/** Routes of every endpoint; literal segments win over placeholders (`/list` over `/{id}`). */
export class OperationRouter {
  private readonly routes: Route[] = ENDPOINT_NAMES.map(compile).sort(
    (a, b) => a.params.length - b.params.length,
  );

  /** The operation for `method path`, or undefined (the path is not an operation). */
  match(method: string, path: string): RouteMatch | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      route.params.forEach((p, i) => {
        params[p] = decodeURIComponent(m[i + 1] ?? "");
      });
      return { name: route.name, params };
    }
    return undefined;
  }
}
