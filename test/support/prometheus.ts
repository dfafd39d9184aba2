/**
 * Reading Prometheus text exposition (the operator's and the API server's /metrics)
 * for the benchmark and the chaos script: sums of one metric's samples by label.
 */

/** One sample: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of `name` in `text` (comments and other metrics skipped). */
export function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = LINE.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1] as string] = l[2] as string;
    out.push({ name, labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples of `name` whose labels match every entry of `where`. */
export function sumOf(text: string, name: string, where: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((acc, s) => acc + s.value, 0);
}

/** Sums of `name` grouped by the value of label `by` (only samples matching `where`). */
export function sumBy(
  text: string,
  name: string,
  by: string,
  where: Record<string, string> = {},
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples(text, name)) {
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    const key = s.labels[by] ?? "";
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}
