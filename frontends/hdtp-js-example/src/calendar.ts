import { Refusal, type Tool } from "@pactd/hdtp-host";

/** Calendars are the busy times of each identity, by endpoint (RFC 3339). */
export type Calendars = Record<string, { start: string; end: string }[]>;

/** MAX_SLOTS is the most slots an answer holds (availability_slots, HDTP §12). */
const MAX_SLOTS = 5;

/**
 * availabilityTool is check_availability over the calendars, as
 * frontends/hdtpdemo computes it in Go: the free slots of duration_min
 * minutes in the window, back to back from its start, skipping busy
 * times, at most five; bad_request for arguments it cannot read,
 * unavailable for an identity without a calendar.
 */
export function availabilityTool(cals: Calendars): Tool {
  return {
    name: "check_availability",
    permission: "calendar.availability",
    description: "Free times in a window: up to five slots of the asked length.",
    inputSchema: {
      type: "object",
      properties: {
        window: { type: "object", properties: { from: { type: "string" }, to: { type: "string" }, tz: { type: "string" } }, required: ["from", "to", "tz"] },
        duration_min: { type: "integer" },
      },
      required: ["window", "duration_min"],
    },
    run(call) {
      const busy = cals[call.endpoint];
      if (!busy) throw new Refusal("unavailable");
      const w = call.arguments["window"] as { from?: unknown; to?: unknown; tz?: unknown } | undefined;
      const dur = call.arguments["duration_min"];
      const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
      if (typeof w !== "object" || w === null || typeof w.from !== "string" || typeof w.to !== "string" || typeof w.tz !== "string" ||
        !rfc3339.test(w.from) || !rfc3339.test(w.to) || !Number.isInteger(dur) || (dur as number) < 1 || (dur as number) > 1440) {
        throw new Refusal("bad_request");
      }
      const tz = w.tz;
      try {
        new Intl.DateTimeFormat("en", { timeZone: tz });
      } catch {
        throw new Refusal("bad_request");
      }
      const from = Date.parse(w.from), to = Date.parse(w.to), d = (dur as number) * 60_000;
      if (!(from < to) || to - from > 31 * 86_400_000) throw new Refusal("bad_request");
      const taken = busy.map((b) => [Date.parse(b.start), Date.parse(b.end)] as const).filter(([s, e]) => !isNaN(s) && !isNaN(e));
      const slots: { start: string; end: string; tz: string }[] = [];
      for (let s = from; s + d <= to && slots.length < MAX_SLOTS; s += d) {
        if (taken.every(([ts, te]) => !(s < te && ts < s + d))) slots.push({ start: inZone(s, tz), end: inZone(s + d, tz), tz });
      }
      return { slots };
    },
  };
}

/** inZone writes an instant in RFC 3339 with the zone's offset at that instant, as Go's time.Format(time.RFC3339) does. */
export function inZone(ms: number, tz: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const local = `${parts["year"]}-${parts["month"]}-${parts["day"]}T${parts["hour"]}:${parts["minute"]}:${parts["second"]}`;
  const offMin = Math.round((Date.parse(local + "Z") - Math.floor(ms / 1000) * 1000) / 60_000);
  if (offMin === 0) return local + "Z";
  const sign = offMin < 0 ? "-" : "+", a = Math.abs(offMin);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}
