/**
 * Kubeconfig files read as kubectl (client-go's clientcmd) reads them: several files
 * (`$KUBECONFIG`) merge into one document where the first file to name a cluster, user
 * or context wins and the first to set `current-context` sets it; a file of the list
 * that does not exist is skipped; every relative path a file holds (CA, client
 * certificate and key, token file, an exec command given as a path) is taken from that
 * file's directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { parse } from "yaml";

type Named<T> = { name: string } & T;

/** A kubeconfig document (the fields read here; others are kept as they are). */
export interface KubeconfigDoc {
  "current-context"?: string;
  contexts: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters: Named<{ cluster?: Record<string, unknown> }>[];
  users: Named<{ user?: Record<string, unknown> }>[];
}

/** Cluster fields that name files. */
const CLUSTER_PATHS = ["certificate-authority"];
/** User fields that name files. */
const USER_PATHS = ["client-certificate", "client-key", "tokenFile"];

/**
 * The document `files` make together (client-go's merge, see the module comment).
 * `explicit`: one file the user named (`--kubeconfig`), which must exist; from a list,
 * missing files are skipped, and none existing is an error.
 */
export function readKubeconfigs(files: readonly string[], explicit = false): KubeconfigDoc {
  const merged: KubeconfigDoc = { contexts: [], clusters: [], users: [] };
  let read = 0;
  for (const file of [...new Set(files)]) {
    if (!explicit && !existsSync(file)) continue;
    const doc = readOne(file);
    read += 1;
    merged["current-context"] ||= doc["current-context"] || undefined;
    for (const key of ["contexts", "clusters", "users"] as const) {
      const list = merged[key] as Named<object>[];
      for (const entry of doc[key] as Named<object>[]) {
        if (!list.some((e) => e.name === entry.name)) list.push(entry);
      }
    }
  }
  if (read === 0) throw new Error(`none of the kubeconfig files exists: ${files.join(", ")}`);
  if (!merged["current-context"]) delete merged["current-context"];
  return merged;
}

/**
 * A YAML parse error as one line: yaml's message without the excerpt and caret it
 * adds below its `at line L, column C`.
 */
export function yamlErrorLine(err: unknown): string {
  const [first = ""] = String((err as Error).message).split("\n");
  return first.replace(/:$/, "");
}

/** One file, its relative paths made absolute; an error names the file. */
function readOne(file: string): KubeconfigDoc {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read the kubeconfig ${file}: ${(err as Error).message}`);
  }
  let raw: Partial<KubeconfigDoc>;
  try {
    raw = (parse(text) ?? {}) as Partial<KubeconfigDoc>;
  } catch (err) {
    throw new Error(`the kubeconfig ${file} is not valid YAML: ${yamlErrorLine(err)}`);
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new Error(`the kubeconfig ${file} is not a mapping`);
  }
  const base = dirname(file);
  const absolute = (v: unknown) =>
    typeof v === "string" && v !== "" && !isAbsolute(v) ? join(base, v) : v;
  const clusters = (raw.clusters ?? []).filter(named).map((c) => {
    if (!c.cluster) return c;
    const cluster = { ...c.cluster };
    for (const f of CLUSTER_PATHS) if (f in cluster) cluster[f] = absolute(cluster[f]);
    return { ...c, cluster };
  });
  const users = (raw.users ?? []).filter(named).map((u) => {
    if (!u.user) return u;
    const user = { ...u.user };
    for (const f of USER_PATHS) if (f in user) user[f] = absolute(user[f]);
    // A command given as a path (not looked up in PATH) is relative to the file too.
    const exec = user.exec as { command?: unknown } | undefined;
    if (exec && typeof exec.command === "string" && exec.command.includes(sep)) {
      user.exec = { ...exec, command: absolute(exec.command) };
    }
    return { ...u, user };
  });
  const current = raw["current-context"];
  return {
    ...(typeof current === "string" && current !== "" ? { "current-context": current } : {}),
    contexts: (raw.contexts ?? []).filter(named),
    clusters,
    users,
  };
}

function named<T>(entry: T): entry is T & { name: string } {
  return typeof (entry as { name?: unknown } | null)?.name === "string";
}
