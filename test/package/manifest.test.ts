import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { consumerProject } from "./consumer-project.js";

describe("the published package.json", () => {
	it("has no install-time scripts, so npm 11 does not ask to approve agentchart's", async () => {
		const { tarball } = await consumerProject();
		const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" })) as { scripts?: Record<string, string> };
		const installScripts = ["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare"].filter((name) => manifest.scripts?.[name] !== undefined);
		expect(installScripts).toEqual([]);
	}, 300_000);
});
