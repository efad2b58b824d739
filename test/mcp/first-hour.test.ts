/**
 * What a newcomer reads when an MCP server does not start, and what `status()` counts.
 */
import { describe, expect, it } from "vitest";
import { connectMcpServers } from "../../src/mcp/index.js";
import { exitReasonFromStderr } from "../../src/mcp/stderr-summary.js";
import { everythingServer } from "./helpers.js";

describe("a stdio server that crashes at start", () => {
	it("is reported with the line that says why (Node's Cannot find module), not the last lines of the crash", async () => {
		const attempt = connectMcpServers({
			servers: { broken: { command: process.execPath, args: ["/nonexistent/mcp-server.js"], stderr: "ignore", reconnect: false } },
		});
		const error = await attempt.then(
			() => undefined,
			(failure: unknown) => failure as Error,
		);
		expect(error?.message).toBe(`connectMcpServers: could not connect to an MCP server:\n  - "broken": the server process exited: Error: Cannot find module '/nonexistent/mcp-server.js'`);
	});

	it("names the package an ES module server could not import", async () => {
		const attempt = connectMcpServers({
			servers: { broken: { command: process.execPath, args: ["--input-type=module", "-e", 'import "agentchart-no-such-package";'], stderr: "ignore", reconnect: false } },
		});
		await expect(attempt).rejects.toThrow(/"broken": the server process exited: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'agentchart-no-such-package' imported from /);
	});

	it("picks Python's exception line, an error line of other tools, or else quotes the last lines", () => {
		const python = 'Traceback (most recent call last):\n  File "/srv/server.py", line 1, in <module>\n    import mcp_tools\nModuleNotFoundError: No module named \'mcp_tools\'\n';
		expect(exitReasonFromStderr(python)).toBe("the server process exited: ModuleNotFoundError: No module named 'mcp_tools'");
		expect(exitReasonFromStderr("starting\nerror: unknown option '--port'\nusage: server [options]\n")).toBe("the server process exited: error: unknown option '--port'");
		expect(exitReasonFromStderr("one\ntwo\n")).toBe("the server process exited; last stderr: one / two");
		expect(exitReasonFromStderr("")).toBe("the server process exited");
	});
});

describe("mcp.status()", () => {
	it("counts the tools tools() offers from each server, and the ones it lists", async () => {
		const mcp = await connectMcpServers({ servers: { everything: everythingServer() }, onProblem: () => undefined });
		try {
			const [status] = mcp.status();
			const offered = mcp.tools().filter((tool) => tool.name.startsWith("everything__")).length;
			expect(status?.toolCount).toBe(offered);
			// server-everything lists one more: its task-only tool, left out and reported.
			expect(status?.listedToolCount).toBe(offered + mcp.problems().length);
			expect(mcp.problems().length).toBeGreaterThan(0);
		} finally {
			await mcp.close();
		}
	});
});
