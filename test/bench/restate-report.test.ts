/**
 * The Restate section of the bench report says what it measured: medians with min–max, and the
 * Node the workers really ran on (a full `npm run bench` started on Node 20 runs itself again on
 * Node 24, and its workers then run on 24, not on 22).
 */
import { expect, it } from "vitest";
import { summarize } from "../../bench/lib/stats.js";
import { RESTATE_QUICK, formatRestate } from "../../bench/restate.js";

it("reports medians with min–max and the Node the workers ran on", () => {
	const report = formatRestate({
		session: summarize([50, 40, 60]),
		floor: summarize([20, 30, 25]),
		added: summarize([30, 10, 35]),
		sessionsPerSecond: summarize([70, 60, 80]),
		floorPerSecond: summarize([150, 140, 160]),
		workerNode: "v24.21.0",
		options: RESTATE_QUICK,
	});
	expect(report).toContain("| agent session (`prompt`: 2 model steps, 3 tool calls) | 50.0 (40.0–60.0) |");
	expect(report).toContain("| agent sessions, each one 3-tool turn | 70.0 (60.0–80.0) |");
	expect(report).toContain("workers on Node 24.21.0,");
	expect(report).not.toContain("Node 22");
});
