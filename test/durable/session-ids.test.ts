/**
 * Session ids as the file store's directory names. On Windows, a name Windows keeps for a device
 * (`con`, `nul.txt`, `COM1`) is the device, not a directory: `con` could not be made, and a file
 * written under `nul` went nowhere; and a last dot is dropped, so `a.` was `a`'s directory. There
 * those names are escaped now. Elsewhere they are plain names, and stay as they were (sessions
 * stored under them keep their directories).
 */
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { directoryName } from "../../src/durable/session-directory.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-session-ids-");

describe("session ids as directory names", () => {
	it("escapes the names Windows keeps for devices, and a last dot, on Windows", () => {
		const names = ["con", "CON", "nul.txt", "Com1.json", "lpt9", "aux", "prn.", "a."].map((id) => directoryName(id, "win32"));
		expect(names).toEqual(["%63on", "%43ON", "%6eul.txt", "%43om1.json", "%6cpt9", "%61ux", "%70rn%2e", "a%2e"]);
		// Not devices: a longer name, a device's name inside another, a dot inside.
		expect(["console", "icon", "com10", "a.b", "nul_"].map((id) => directoryName(id, "win32"))).toEqual(["console", "icon", "com10", "a.b", "nul_"]);
	});

	it("keeps them as they were elsewhere", () => {
		expect(["con", "nul.txt", "a."].map((id) => directoryName(id, "linux"))).toEqual(["con", "nul.txt", "a."]);
	});

	it("gives two ids two names on Windows too: an escape in an id is escaped itself", () => {
		const ids = ["con", "%63on", "a.", "a%2e", "a"];
		expect(new Set(ids.map((id) => directoryName(id, "win32"))).size).toBe(ids.length);
	});

	it("keeps every odd id in a directory of its own inside the root, and reads it back", async () => {
		const root = join(await tempDir(), "root");
		const store = createFileStore(root, { fsync: "never" });
		const ids = [".", "..", "../x", "/", "/etc/passwd", "a\0b", "x".repeat(300), "é".repeat(300), "\u{1F600}", "con", "a\\b", " ", "\ud800", "current", "writer"];
		for (const id of ids) {
			const scripted = createScriptedModel([{ content: `hello ${id.length}`, usage: { input: 1, output: 1 } }]);
			const agent = new Agent({ store, sessionId: id, initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			await agent.prompt("hi");
			await agent.saved();
			expect(dirname(resolve(store.directoryOf(id)))).toBe(resolve(root));
		}
		expect(readdirSync(root)).toHaveLength(ids.length);
		expect(readdirSync(dirname(root))).toEqual(["root"]);
		for (const id of ids) {
			const none = createScriptedModel([]);
			const loaded = await Agent.load({ store: createFileStore(root), sessionId: id, initialState: { model: none.model }, streamFn: none.streamFn });
			expect(loaded.state.messages).toHaveLength(2);
		}
		expect(() => directoryName("")).toThrow("a session id cannot be empty");
	});
});
