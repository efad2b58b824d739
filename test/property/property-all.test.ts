/**
 * `npm run property:all` (scripts/property-all.ts) runs every property test at many times its
 * default count. Such a run is only worth its half hour if a test fails for what it finds, not for
 * the time it took: a property whose timeout is a fixed number fails on its own clock once the
 * runs are many (the changed-tools property hit its fixed 120 s at 800 runs, and vitest's default
 * 30 s caught others), and a file the script misses is never run long at all.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { propertyTestFiles } from "../../scripts/property-all.js";

/** A test's timeout written as a fixed number: `}, 120_000);` closing an `it`. */
const FIXED_TIMEOUT = /^\s*\}, [\d_]+\);$/m;
/** A timeout that grows with the run count: `Math.max(120_000, NUM_RUNS * 1_000)`. */
const SCALED_TIMEOUT = /Math\.max\([\d_]+, [^)]*RUNS[^)]*\*/;

describe("npm run property:all", () => {
	const files = propertyTestFiles();

	it("finds the property tests that read PROPERTY_RUNS, and only those", () => {
		for (const file of ["test/property/agent.property.test.ts", "test/property/changed-tools.property.test.ts", "test/durable/one-writer.test.ts", "test/machine/interpreter/random.test.ts"]) {
			expect(files).toContain(file);
		}
		// A unit property with its own fixed count is fast at any scale and is not run again.
		expect(files).not.toContain("test/util/json-writable.test.ts");
		for (const file of files) expect(readFileSync(file, "utf8")).toMatch(/PROPERTY_RUNS/);
	});

	it.each(files)("%s: its timeouts grow with PROPERTY_RUNS", (file) => {
		const source = readFileSync(file, "utf8");
		expect(source, `${file}: a fixed timeout fails a long run on its own clock; write Math.max(<now>, RUNS * <ms a run>)`).not.toMatch(FIXED_TIMEOUT);
		expect(source, `${file}: no timeout grows with the runs (vitest's default 30 s applies)`).toMatch(SCALED_TIMEOUT);
	});
});
