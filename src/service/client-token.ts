/**
 * Client tokens of the crash-safe create protocol (docs/architecture.md): a create
 * carries a token the controller recorded before sending it, so that after a crash the
 * resource can be found again by listing. A task carries it in an environment variable,
 * a NAS in its description (the only free-text field a NAS subscription has).
 */

/** Environment variable of a training task that holds the client token. */
export const CLIENT_TOKEN_ENV = "AIDC_CLIENT_TOKEN";

const MARKER_PREFIX = "[aidc-token:";

/** The marker appended to a NAS description: `[aidc-token:<token>]`. */
export function clientTokenMarker(token: string): string {
  return `${MARKER_PREFIX}${token}]`;
}

/**
 * `description` with the token marker appended (separated by a space), replacing a
 * marker already present so that the description never grows.
 */
export function withClientTokenMarker(description: string | undefined, token: string): string {
  const base = stripClientTokenMarker(description ?? "");
  return base ? `${base} ${clientTokenMarker(token)}` : clientTokenMarker(token);
}

/** `description` without any token or owner marker, for showing to people or comparing with a spec. */
export function stripClientTokenMarker(description: string): string {
  return description.replace(/\s*\[aidc-(?:token|owner):[^\]]*\]/g, "").trim();
}

/** Environment variable of a training task (and template) that holds the owner mark. */
export const OWNER_MARK_ENV = "AIDC_OWNER";

/**
 * `description` with the token marker and the owner marker `[aidc-owner:<mark>]`
 * (controllers/managed/tenancy.ts), each replacing one already present.
 */
export function withCreateMarkers(
  description: string | undefined,
  token: string,
  owner: string,
): string {
  return `${withClientTokenMarker(description, token)} [aidc-owner:${owner}]`;
}

/** The owner mark text in a description's marker, if any. */
export function ownerMarkInDescription(description: string | undefined): string | undefined {
  const m = /\[aidc-owner:([^\]]*)\]/.exec(description ?? "");
  return m?.[1] || undefined;
}

/** The token in a description's marker, if any. */
export function clientTokenInDescription(description: string | undefined): string | undefined {
  const m = /\[aidc-token:([^\]]*)\]/.exec(description ?? "");
  return m?.[1] || undefined;
}
