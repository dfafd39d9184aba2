import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { root } from "../../scripts/generated-files.js";

/** Every markdown file of the repository, relative to its root (node_modules and dot-directories aside). */
export function markdownFiles(): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((p) => !p.split("/").some((part) => part === "node_modules" || part.startsWith(".")));
}
