/**
 * One row of the endpoint table and the two ways to write it: {@link documented} (the
 * spec shows the path) and {@link assumed} (a default chosen by this project, see
 * docs/service-assumptions.md). The core table (endpoints.ts) and every kind's own
 * endpoints (src/service/kinds/<kind>.ts) are written with them.
 */

/** HTTP methods the service uses. */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** One row of the endpoint table. */
export interface EndpointDefinition {
  method: HttpMethod;
  /** Path appended to the base URL, with `{param}` placeholders. */
  path: string;
  /**
   * Whether sending the request twice has the effect of sending it once, so a failed
   * attempt may be retried blindly. Creates, scales and port changes are not.
   */
  idempotent: boolean;
  /** Whether the spec shows this path (false: a default chosen by this project). */
  documented: boolean;
  /** Whether the endpoint is enabled without configuration. */
  enabledByDefault: boolean;
}

/** Endpoint rows by operation name (the name the operator configuration uses). */
export type EndpointDeclarations = Readonly<Record<string, EndpointDefinition>>;

/** An operation whose path the spec shows. */
export function documented(
  method: HttpMethod,
  path: string,
  idempotent: boolean,
): EndpointDefinition {
  return { method, path, idempotent, documented: true, enabledByDefault: true };
}

/**
 * An operation whose path the spec does not show; `enabledByDefault` false leaves it
 * disabled until the configuration names a path (the deletes).
 */
export function assumed(
  method: HttpMethod,
  path: string,
  idempotent: boolean,
  enabledByDefault = true,
): EndpointDefinition {
  return { method, path, idempotent, documented: false, enabledByDefault };
}
