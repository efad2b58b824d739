import { describe, expect, it } from "vitest";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent } from "./helpers.js";

function messageEndHarness(minChars: number, maxChars: number) {
	const agent = new FakeAgent();
	const blocks: ReplyPayload[] = [];
	const replies = subscribeReplies(agent, {
		blockReplyBreak: "message_end",
		blockReplyChunking: { minChars, maxChars, breakPreference: "paragraph" },
		onBlockReply: (payload) => void blocks.push(payload),
	});
	const send = (text: string): string[] => {
		agent.messageStart();
		agent.delta(text);
		agent.messageEnd(text);
		return blocks.map((block) => block.text ?? "");
	};
	return { agent, blocks, replies, send };
}

describe("block chunking through the subscriber", () => {
	it("keeps an indented fenced block intact (L1)", () => {
		const { send } = messageEndHarness(5, 30);
		const texts = send("Intro\n\n  ```js\n  const x = 1;\n  ```\n\nOutro");
		expect(texts).toHaveLength(3);
		expect(texts[1]).toBe("  ```js\n  const x = 1;\n  ```");
	});

	it("keeps a four-backtick fence intact (L2)", () => {
		// Exact blocks: every part being somewhere in the joined text held for a fence split in two (a
		// maximum of 20 splits it, as a fence longer than the maximum must be).
		expect(messageEndHarness(10, 30).send("Intro\n\n````md\nline1\nline2\n````\n\nOutro")).toEqual(["Intro\n\n````md\nline1\nline2\n````", "Outro"]);
		expect(messageEndHarness(5, 25).send("Intro\n\n````md\nline1\nline2\n````\n\nOutro")).toEqual(["Intro", "````md\nline1\nline2\n````", "Outro"]);
	});

	it("reopens a fence it has to split (M1)", () => {
		const { send } = messageEndHarness(10, 30);
		const texts = send(`\`\`\`txt\n${"a".repeat(80)}\n\`\`\``);
		expect(texts.length).toBeGreaterThan(1);
		for (const text of texts) {
			expect(text.startsWith("```txt")).toBe(true);
			expect(text.match(/```/g)?.length).toBeGreaterThanOrEqual(2);
		}
	});

	it("keeps a tilde fence whole (M2)", () => {
		const { send } = messageEndHarness(5, 25);
		const texts = send("Intro\n\n~~~sh\nline1\nline2\n~~~\n\nOutro");
		expect(texts).toEqual(["Intro", "~~~sh\nline1\nline2\n~~~", "Outro"]);
	});

	it("splits a long single-line fence with reopened chunks (N1)", () => {
		const { send } = messageEndHarness(10, 40);
		const texts = send(`\`\`\`json\n${"x".repeat(120)}\n\`\`\``);
		expect(texts.length).toBeGreaterThan(1);
		for (const text of texts) {
			expect(text.startsWith("```json")).toBe(true);
			expect(text.length).toBeLessThanOrEqual(40);
		}
	});

	it("sends paragraphs as separate blocks and records them (O1)", () => {
		const { send, replies } = messageEndHarness(5, 25);
		expect(send("First block line\n\nSecond block line")).toEqual(["First block line", "Second block line"]);
		expect(replies.assistantTexts).toEqual(["First block line", "Second block line"]);
	});

	it("sends a fence between paragraphs as its own block (O2)", () => {
		const { send } = messageEndHarness(5, 25);
		expect(send("Intro\n\n```bash\nline1\nline2\n```\n\nOutro")).toEqual(["Intro", "```bash\nline1\nline2\n```", "Outro"]);
	});

	it("sends nothing while streaming in message_end mode", () => {
		const { agent, blocks } = messageEndHarness(1, 10);
		agent.messageStart();
		agent.delta("A fairly long text.\n\nWith paragraphs.");
		agent.bareTextEnd();
		expect(blocks).toEqual([]);
	});

	it("streams soft chunks in text_end mode as soon as they are big enough", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 10, maxChars: 100 },
			onBlockReply: (payload) => void blocks.push(payload),
		});
		agent.messageStart();
		agent.delta("First paragraph here.\n\nSecond");
		expect(blocks.map((block) => block.text)).toEqual(["First paragraph here."]);
		agent.delta(" paragraph.");
		agent.bareTextEnd();
		expect(blocks.map((block) => block.text)).toEqual(["First paragraph here.", "Second paragraph."]);
	});

	it("tags blocks with the index of their assistant message", () => {
		const agent = new FakeAgent();
		const indexes: number[] = [];
		subscribeReplies(agent, { onBlockReply: (_payload, context) => void indexes.push(context.assistantMessageIndex) });
		for (const text of ["one", "two"]) {
			agent.messageStart();
			agent.delta(text);
			agent.bareTextEnd();
		}
		expect(indexes).toEqual([1, 2]);
	});
});
