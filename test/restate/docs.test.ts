/**
 * What issue 36 asked the README and docs/restate.md to say stays said: why the sessions are built
 * on the Restate SDK rather than @restatedev/xstate, when to move, how to run restate-server and
 * register workers, how to call a session and watch its events, what survives what.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

it("the README says why the sessions use the Restate SDK directly, not @restatedev/xstate, and links the guide", async () => {
	const readme = await readFile(join(ROOT, "README.md"), "utf8");
	const section = readme.slice(readme.indexOf("## Many machines: sessions on Restate"));
	expect(section).toContain("Why built on the Restate SDK directly rather than Restate's XState integration\n(`@restatedev/xstate`)");
	expect(section).toContain("npm run durable:demo");
	expect(section).toContain("[Restate](docs/restate.md)");
});

it("docs/restate.md covers when to move, restate-server, registering workers, clients, events and what survives what", async () => {
	const guide = await readFile(join(ROOT, "docs/restate.md"), "utf8");
	const headings = [...guide.matchAll(/^## (.*)$/gm)].map((match) => match[1]);
	expect(headings).toEqual(
		expect.arrayContaining([
			"When to move from one process to Restate",
			"Why the SDK directly, not @restatedev/xstate",
			"Install and Node versions",
			"A worker",
			"Running restate-server and registering workers",
			"Calling a session from a client",
			"Watching a session's events",
			"Approvals",
			"What survives what",
		]),
	);
	expect(guide).toContain("curl -X POST http://127.0.0.1:9070/deployments");
});
