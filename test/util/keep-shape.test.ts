/**
 * util/keep-shape.ts keeps one instance of each class a run makes, so that V8 keeps those
 * classes' hidden classes (maps) through a full collection while no run is in progress: a dead
 * map takes every function optimized against it down with it, and the next runs compile them
 * again (1,000 concurrent runs after an idle full collection took about 1.5 times as long).
 * A kept instance only helps if it has the very map the run's instances have (same fields, in
 * the same order, no field representation that forces a new map), which only V8 can tell: the
 * check runs in a process of its own with V8's natives syntax.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/keep-shape-child.ts", import.meta.url));

describe("keepShape", () => {
	it("keeps an instance with the run's own map for each class a run makes, before and after full collections", () => {
		const result = spawnSync(process.execPath, ["--allow-natives-syntax", "--expose-gc", "--import", "tsx", CHILD], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
		expect(result.stderr).toBe("");
		const report = JSON.parse(result.stdout) as { first: Record<string, string>; afterCollections: Record<string, string>; found: Record<string, string> };
		const classes = ["Agent", "MutableAgentState", "LeanActor root", "LeanActor child", "snapshot of a root", "snapshot of a child", "LeanScope", "LeanSystem", "RunAbort", "Step", "StepEnqueue"];
		const expected = Object.fromEntries(classes.map((name) => [name, "same map"]));
		expect(report.first).toEqual(expected);
		expect(report.afterCollections).toEqual(expected);
		// Every class of ours found by walking what the run made, named or not: a class added to
		// a run later fails here until it has its kept instance.
		expect(Object.keys(report.found)).toEqual(expect.arrayContaining(["Agent", "ChartState", "LeanActor", "RunAbort", "CallbackState"]));
		expect(Object.entries(report.found).filter(([, verdict]) => verdict !== "same map")).toEqual([]);
	}, 60_000);
});
