/**
 * Vitest global setup: `AGENTCHART_ENTRY=packed` means "the packed tarball, installed into a
 * throwaway project as a user installs it" (test/package/consumer-project.ts). It is resolved
 * here, once, before the test processes start, so pi's coding agent runs on exactly what
 * `npm publish` would ship. `npm test` sets it.
 */
// @ts-nocheck

import { join } from "node:path";
import { consumerProject } from "../package/consumer-project.js";

export default async function setup(): Promise<void> {
	if (process.env["AGENTCHART_ENTRY"] !== "packed") return;
	const { dir } = await consumerProject();
	process.env["AGENTCHART_ENTRY"] = join(dir, "node_modules/agentchart/dist/index.js");
}
