// The example's check_availability gives the same answers as Go's
// frontends/hdtpdemo, which the e2e walk derives by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Refusal, type Call } from "@pactd/hdtp-host";
import { availabilityTool, inZone } from "../src/calendar.js";

const endpoint = "https://agent.maya.example/mcp";
const tool = availabilityTool({ [endpoint]: [{ start: "2026-12-08T10:00:00+01:00", end: "2026-12-08T11:00:00+01:00" }] });
const call = (args: Record<string, unknown>, at = endpoint) => tool.run({ endpoint: at, arguments: args } as Call);
const window = { from: "2026-12-08T09:00:00+01:00", to: "2026-12-08T13:00:00+01:00", tz: "Europe/Berlin" };

test("three free hours around a busy one, in the asked zone", async () => {
  assert.deepEqual(await call({ window, duration_min: 60 }), {
    slots: [
      { start: "2026-12-08T09:00:00+01:00", end: "2026-12-08T10:00:00+01:00", tz: "Europe/Berlin" },
      { start: "2026-12-08T11:00:00+01:00", end: "2026-12-08T12:00:00+01:00", tz: "Europe/Berlin" },
      { start: "2026-12-08T12:00:00+01:00", end: "2026-12-08T13:00:00+01:00", tz: "Europe/Berlin" },
    ],
  });
  // At most five, however many fit.
  assert.equal(((await call({ window, duration_min: 15 })) as { slots: unknown[] }).slots.length, 5);
});

test("arguments it cannot read are bad_request; no calendar is unavailable", async () => {
  const refused = async (args: Record<string, unknown>, at?: string) => {
    try {
      await call(args, at);
    } catch (err) {
      return err instanceof Refusal ? err.code : String(err);
    }
    return "answered";
  };
  assert.equal(await refused({ window, duration_min: 0 }), "bad_request");
  assert.equal(await refused({ window, duration_min: 1.5 }), "bad_request");
  assert.equal(await refused({ window: { ...window, tz: "Mars/Olympus" }, duration_min: 60 }), "bad_request");
  assert.equal(await refused({ window: { ...window, from: window.to, to: window.from }, duration_min: 60 }), "bad_request");
  assert.equal(await refused({ duration_min: 60 }), "bad_request");
  assert.equal(await refused({ window, duration_min: 60 }, "https://agent.you.example/mcp"), "unavailable");
  assert.equal(await refused({ window, duration_min: 60 }), "answered"); // the control
});

test("inZone writes RFC 3339 with the zone's offset, as Go does", () => {
  assert.equal(inZone(Date.parse("2026-12-08T08:00:00Z"), "Europe/Berlin"), "2026-12-08T09:00:00+01:00");
  assert.equal(inZone(Date.parse("2026-07-08T08:00:00Z"), "Europe/Berlin"), "2026-07-08T10:00:00+02:00");
  assert.equal(inZone(Date.parse("2026-07-08T08:00:00Z"), "UTC"), "2026-07-08T08:00:00Z");
  assert.equal(inZone(Date.parse("2026-07-08T08:00:00Z"), "Asia/Kolkata"), "2026-07-08T13:30:00+05:30");
});
