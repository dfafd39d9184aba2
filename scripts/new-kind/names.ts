/**
 * The names `npm run new-kind` derives from a kind's name (PascalCase, e.g.
 * `BlockVolume`), and the check that refuses a bad one.
 */

/** Every spelling of a kind's name the scaffold's files use. */
export interface KindNames {
  /** `BlockVolume`: the kind, types and the CRD's `kind`. */
  kind: string;
  /** `blockvolume`: file and folder names, the controller's name, the CRD's singular. */
  lower: string;
  /** `blockVolume`: values (`blockVolumeCrd`, `blockVolumeController`). */
  camel: string;
  /** `BLOCK_VOLUME`: constants (`BLOCK_VOLUME_REASONS`). */
  constant: string;
  /** `blockvolumes`: the CRD's plural and the resource of RBAC rules. */
  plural: string;
  /** `block volume`: prose (messages, descriptions). */
  words: string;
}

/** PascalCase: one or more humps, each a capital and lower-case letters or digits. */
const PASCAL_CASE = /^(?:[A-Z][a-z0-9]+)+$/;

/** The names of `kind`; throws an Error saying why for a name that is not PascalCase. */
export function kindNames(kind: string): KindNames {
  if (!PASCAL_CASE.test(kind)) {
    throw new Error(
      `"${kind}" is not a kind name: give it in PascalCase, each word a capital followed by lower-case letters or digits (e.g. BlockVolume)`,
    );
  }
  const humps = kind.match(/[A-Z][a-z0-9]+/g) ?? [];
  const lower = kind.toLowerCase();
  return {
    kind,
    lower,
    camel: `${kind[0]?.toLowerCase()}${kind.slice(1)}`,
    constant: humps.map((h) => h.toUpperCase()).join("_"),
    plural: lower.endsWith("s") ? `${lower}es` : `${lower}s`,
    words: humps.map((h) => h.toLowerCase()).join(" "),
  };
}
