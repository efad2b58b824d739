/**
 * How `state` counts a run whose end is already stored (found flaky in test/restate/robustness.test.ts,
 * "shows a message steered to an idle session at every moment of the run it starts", and made
 * to fail every time by a delay between the run's store of its snapshot and its clear of itself):
 * a run stores its end in writes a reader can come between, the snapshot first, then the inbox's
 * hand-over, its checkpoints and its record. Read in between, the run's messages were counted
 * twice (the snapshot's and the checkpoints'), and a delivery's message both as waiting and as
 * taken. The run records the snapshot it went on from; another stored snapshot is its end.
 */
import { describe, expect, it } from "vitest";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import type { RunInProgress } from "../../src/restate/session-types.js";
import { runGoingOn } from "../../src/restate/session-view.js";

const snapshotAt = (createdAt: string) => ({ createdAt }) as AgentSnapshot;
const run = (from: string | null | undefined): RunInProgress => ({ invocationId: "inv_1", number: 1, turns: 2, ...(from === undefined ? {} : { from }) });

describe("the run a reader of the session counts", () => {
	it("is the stored run while the stored snapshot is the one it went on from", () => {
		expect(runGoingOn(snapshotAt("2026-12-08T00:00:00.000Z"), run("2026-12-08T00:00:00.000Z"))).toEqual(run("2026-12-08T00:00:00.000Z"));
		// The session's first run went on from no snapshot.
		expect(runGoingOn(null, run(null))).toEqual(run(null));
	});

	it("is none once the stored snapshot is another: the run's end, which holds all it did", () => {
		expect(runGoingOn(snapshotAt("2026-12-08T00:00:01.000Z"), run("2026-12-08T00:00:00.000Z"))).toBeNull();
		expect(runGoingOn(snapshotAt("2026-12-08T00:00:01.000Z"), run(null))).toBeNull();
	});

	it("is the stored run when it does not say where it went on from (written by an older worker)", () => {
		expect(runGoingOn(snapshotAt("2026-12-08T00:00:01.000Z"), run(undefined))).toEqual(run(undefined));
		expect(runGoingOn(snapshotAt("2026-12-08T00:00:01.000Z"), undefined)).toBeNull();
	});
});
