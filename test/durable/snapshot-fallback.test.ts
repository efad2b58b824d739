/**
 * A file store whose last snapshot is damaged (a disk that lost it, an edit) loads the one before
 * (`snapshot.prev.json`); its journal went on from the damaged one (each snapshot's save keeps
 * only the entries after it), so the runs journaled there do not follow the snapshot it loads.
 * They are left out and reported, and the session goes on from the snapshot. Before, they stayed
 * in the journal unapplied and unreported, the next run took the number of one of them, and a
 * later load applied them after it: a run the user had never seen again came back, out of order
 * ("three", then "two").
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { Type } from "typebox";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-fallback-");

function texts(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => `${message.role}: ${textOf(message)}`);
}

/** Loads session "s" from `root` as a process of its own would (a store of its own), its replies `reply <tag> <n>`. */
function load(root: string, tag: string): Promise<Agent> {
	const scripted = createScriptedModel(Array.from({ length: 5 }, (_, index) => ({ content: `reply ${tag} ${index + 1}` })));
	return Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

describe("a file store session whose last snapshot does not read", () => {
	it("goes on from the snapshot before it, without the runs journaled after the damaged one (reported), which never come back", async () => {
		const root = await tempDir();
		const first = await load(root, "A");
		// A new session's first write is a snapshot (empty); "one" is journaled after it.
		await first.prompt("one");
		// The last snapshot (the empty one is kept as the one before); "two" is journaled after it.
		await first.save();
		await first.prompt("two");
		await first.saved();
		await writeFile(join(createFileStore(root).filesOf("s"), "snapshot.json"), '{"crc":"00000000","snapshot":"damaged"}');

		const second = await load(root, "B");
		expect(texts(second.state.messages)).toEqual([]);
		await second.prompt("three");
		await second.saved();

		const third = await load(root, "C");
		expect(texts(third.state.messages)).toEqual(["user: three", "assistant: reply B 1"]);
		expect(third.storeProblems).toEqual([]);
		expect(second.storeProblems).toEqual([
			expect.stringMatching(/snapshot\.json does not match its checksum/),
			"used snapshot.prev.json instead",
			expect.stringMatching(/^\d+ journal entries written after snapshot\.json left out: they follow that snapshot, not snapshot\.prev\.json/),
			expect.stringMatching(/were copied to .*unread-/),
		]);
	});

	it("leaves out the entries after the damaged one within a run too, and says so: applied across the hole, a call that had run was asked about again with nothing reported", async () => {
		const root = await tempDir();
		const ran: string[] = [];
		const deploy: AgentTool = {
			name: "deploy",
			label: "Deploy",
			description: "Deploys a service.",
			parameters: Type.Object({ service: Type.String() }),
			needsApproval: true,
			async execute(_id, args) {
				ran.push((args as { service: string }).service);
				return { content: [{ type: "text", text: `deployed ${(args as { service: string }).service}` }], details: {} };
			},
		};
		const options = (finalDelayMs: number) => {
			const scripted = createScriptedModel([{ content: [toolCall("deploy", { service: "billing" }, "call-1"), toolCall("deploy", { service: "web" }, "call-2")] }, { content: "Done.", delayMs: finalDelayMs }]);
			return { store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn };
		};
		const first = await Agent.load(options(60_000));
		const run = first.prompt("deploy both");
		while (first.pendingApprovals.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
		await first.approve("call-1");
		// A snapshot holds call-1's decision; call-2's is journaled after it, then the next save's snapshot holds it.
		await first.approve("call-2");
		while (first.state.messages.filter((message) => message.role === "toolResult").length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
		await first.saved();
		expect(ran).toEqual(["billing", "web"]);
		await writeFile(join(createFileStore(root).filesOf("s"), "snapshot.json"), "not json at all");

		const second = await Agent.load(options(0));
		try {
			expect(second.storeProblems).toEqual([
				expect.stringMatching(/snapshot\.json does not read/),
				"used snapshot.prev.json instead",
				expect.stringMatching(/^\d+ journal (entry|entries) written after snapshot\.json left out: (it follows|they follow) that snapshot, not snapshot\.prev\.json/),
				expect.stringMatching(/were copied to .*unread-/),
			]);
		} finally {
			first.dispose();
			await run.catch(() => undefined);
			second.dispose();
			// Its writes still on their way land before the directory is removed.
			await second.saved().catch(() => undefined);
		}
	});
});
