/**
 * The shapes the emulator writes times in (`timestampFormat` of EmulatorBehaviour): as
 * the spec shows them (`YYYY-MM-DD HH:MM:SS` and ISO 8601 with `Z`, views.ts), as epoch
 * milliseconds (JSON numbers) or in ISO 8601 with a `+08:00` offset.
 */

/** Time shapes (see EmulatorBehaviour.timestampFormat). */
export const TIMESTAMP_FORMATS = ["asShown", "epochMillis", "offset"] as const;
/** A time shape. */
export type TimestampFormat = (typeof TIMESTAMP_FORMATS)[number];

/** The offset the `offset` shape writes times in. */
const OFFSET_MINUTES = 8 * 60;

/** The two forms views.ts writes, both UTC. */
const SHOWN = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?$/;

/** `text` (a time views.ts wrote) in `format`. */
function timeAs(format: TimestampFormat, text: string): string | number {
  const ms = Date.parse(`${text.replace(" ", "T").replace(/Z$/, "")}Z`);
  if (format === "epochMillis") return ms;
  const local = new Date(ms + OFFSET_MINUTES * 60_000).toISOString().slice(0, 19);
  const hh = String(Math.floor(OFFSET_MINUTES / 60)).padStart(2, "0");
  const mm = String(OFFSET_MINUTES % 60).padStart(2, "0");
  return `${local}+${hh}:${mm}`;
}

/** `data` with every time written in `format` (unset times, "", stay as they are). */
export function timesAs(format: TimestampFormat, data: unknown): unknown {
  if (format === "asShown") return data;
  if (typeof data === "string") return SHOWN.test(data) ? timeAs(format, data) : data;
  if (Array.isArray(data)) return data.map((v) => timesAs(format, v));
  if (data === null || typeof data !== "object") return data;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, timesAs(format, v)]));
}
