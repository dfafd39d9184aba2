/**
 * Names and labels of the catalog objects: pure functions of the connection and the
 * product. An object's name is a readable part (connection and product code, DNS-safe)
 * and a hash of the exact connection, code and compute center, so two products never
 * share a name however their codes sanitize, and the same product always gets the same.
 */
import { createHash } from "node:crypto";
import { CATALOG_LABELS, DEFAULT_CONNECTION_LABEL_VALUE } from "../../crds/catalog.js";

/** A label value's longest form. */
const LABEL_MAX = 63;
/** Hex digits of the hash in a name. */
const NAME_HASH = 10;
/** An object name's readable part, so that the whole stays a 63-character DNS label. */
const NAME_READABLE_MAX = LABEL_MAX - NAME_HASH - 1;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The object name of product `code` in compute center `computeCenterId` of connection
 * `connection` (undefined: the default connection): e.g. `team-a-train-gpu-a100-1-3f9a2b1c0d`.
 */
export function productObjectName(
  connection: string | undefined,
  code: string,
  computeCenterId: number | undefined,
): string {
  const readable = `${connection ?? "default"}-${code}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, NAME_READABLE_MAX)
    .replace(/^-+|-+$/g, "");
  const hash = sha256(JSON.stringify([connection ?? null, code, computeCenterId ?? null]));
  return `${readable || "product"}-${hash.slice(0, NAME_HASH)}`;
}

/**
 * `text` as a label value: every run of characters other than letters, digits, `.`,
 * `_`, `-` becomes `-`, ends trimmed to a letter or digit; longer than 63 characters,
 * the first 54 and `_` and 8 hex digits of its hash. Empty: `none`.
 */
export function labelValue(text: string | undefined): string {
  const clean = (text ?? "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  if (!clean) return "none";
  if (clean.length <= LABEL_MAX) return clean;
  const head = clean.slice(0, LABEL_MAX - 9).replace(/[^A-Za-z0-9]+$/, "");
  return `${head}_${sha256(clean).slice(0, 8)}`;
}

/**
 * The `aidc.io/connection` label of a connection's products: the ServiceConnection's
 * name (shortened with a hash past 63 characters), or `default_connection` for the
 * default connection. Either way no other connection's products share it: the `_` of
 * the default's and of a shortened one is in no ServiceConnection name.
 */
export function connectionLabelValue(connection: string | undefined): string {
  if (connection === undefined) return DEFAULT_CONNECTION_LABEL_VALUE;
  return connection.length <= LABEL_MAX ? connection : labelValue(connection);
}

/**
 * The kubectl command that lists the catalog `plural` of one connection (undefined:
 * the default) and no other account's, narrowed by the labels `more` (those set), for
 * a message: `kubectl get nasproducts -l aidc.io/connection=team-a,aidc.io/compute-center=2`.
 */
export function productListCommand(
  plural: "trainingproducts" | "nasproducts",
  connection: string | undefined,
  more: Record<string, string | number | undefined> = {},
): string {
  const labels = { [CATALOG_LABELS.connection]: connectionLabelValue(connection), ...more };
  const selector = Object.entries(labels).flatMap(([k, v]) =>
    v === undefined ? [] : [`${k}=${v}`],
  );
  return `kubectl get ${plural} -l ${selector.join(",")}`;
}

/** The GPU model of a service answer: absent for none (the service sends a dash or null). */
export function gpuModelOf(gpuName: string | undefined): string | undefined {
  const trimmed = gpuName?.trim();
  return trimmed && trimmed !== "-" ? trimmed : undefined;
}
