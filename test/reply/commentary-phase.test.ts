/**
 * Phase-tagged text (OpenAI-Responses-style providers): commentary is narration the user does
 * not see, the final answer is what they read. The phase comes from a text block's
 * `textSignature` or from the message itself, and may change while a block streams.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { withOpenFenceClosed } from "../../src/reply/fences.js";
import { MessageAssembly } from "../../src/reply/message-assembly.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import type { AssistantMessage, AssistantMessageEvent, StreamFn, TextContent } from "../../src/types/index.js";
import { assistantMessage, FakeAgent, phaseSignature, type AssistantOverrides } from "./helpers.js";

function harness(mode: "text_end" | "message_end" = "text_end") {
	const agent = new FakeAgent();
	const blocks: ReplyPayload[] = [];
	const partials: PartialReply[] = [];
	const replies = subscribeReplies(agent, {
		blockReplyBreak: mode,
		onBlockReply: (payload) => void blocks.push(payload),
		onPartialReply: (partial) => void partials.push(partial),
	});
	return { agent, blocks, partials, replies, texts: () => blocks.map((block) => block.text) };
}

const commentary = { textSignature: phaseSignature("commentary") };
const finalAnswer = { textSignature: phaseSignature("final_answer") };

describe("a final answer that extends suppressed commentary", () => {
	it("is delivered whole, not as the new part glued to the whole (G5)", () => {
		const { agent, texts, partials, replies } = harness();
		agent.messageStart();
		agent.delta("Hello", 0, commentary);
		agent.textEnd(undefined, 0);
		expect(texts()).toEqual([]);
		agent.delta(" world", 0, finalAnswer);
		agent.textEnd(undefined, 0);
		agent.messageEnd([{ type: "text", text: "Hello world", ...finalAnswer }]);
		expect(texts()).toEqual(["Hello world"]);
		expect(partials.at(-1)?.text).toBe("Hello world");
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it.each(["its text", "no text"] as const)("shows the whole answer in the partial reply at the delta that extends the commentary, the commentary's end carrying %s", (end) => {
		const { agent, texts, partials } = harness();
		agent.messageStart();
		agent.delta("Hello", 0, commentary);
		if (end === "its text") agent.textEnd(undefined, 0);
		else agent.bareTextEnd(0);
		expect(partials.map((partial) => partial.text)).toEqual([]);
		// Read in step: the first delta of the answer shows the commentary it extends with it, once.
		agent.delta(" world", 0, finalAnswer);
		expect(partials.at(-1)?.text).toBe("Hello world");
		agent.delta("!", 0, finalAnswer);
		expect(partials.at(-1)?.text).toBe("Hello world!");
		agent.textEnd(undefined, 0);
		agent.messageEnd([{ type: "text", text: "Hello world!", ...finalAnswer }]);
		expect(texts()).toEqual(["Hello world!"]);
	});

	it("starts over from the block's text when the provider replaced the commentary (Z13)", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		const partial = assistantMessage([{ type: "text", text: "Working...", ...commentary }]);
		agent.emitRaw({ type: "message_start", message: partial });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Working...") });
		const replaced = assistantMessage([{ type: "text", text: "Done.", ...finalAnswer }]);
		agent.emitRaw({ type: "message_update", message: replaced, assistantMessageEvent: textDelta(replaced, "Done.") });
		agent.emitRaw({ type: "message_update", message: replaced, assistantMessageEvent: textEnd(replaced) });
		agent.emitRaw({ type: "message_end", message: replaced });
		expect(blocks).toEqual(["Done."]);
	});
});

describe("a replaced commentary, as partial replies show it", () => {
	it("shows the answer at the delta that reveals the replacement, not only at the block's end (Z13)", () => {
		const { agent, partials, texts } = harness();
		const partial = assistantMessage([{ type: "text", text: "Working...", ...commentary }]);
		agent.emitRaw({ type: "message_start", message: partial });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Working...") });
		const replaced = assistantMessage([{ type: "text", text: "Done.", ...finalAnswer }]);
		agent.emitRaw({ type: "message_update", message: replaced, assistantMessageEvent: textDelta(replaced, "Done.") });
		expect(partials.map((shown) => shown.text)).toEqual(["Done."]);
		agent.emitRaw({ type: "message_update", message: replaced, assistantMessageEvent: textEnd(replaced) });
		agent.emitRaw({ type: "message_end", message: replaced });
		expect(texts()).toEqual(["Done."]);
	});

	it("starts the partial reply over from the replacement's first delta when the replacement starts with the commentary", () => {
		const { agent, partials, texts } = harness();
		// A listener that lags: the commentary "Let" was replaced by the answer before the listener
		// read its delta, whose phase then reads as the answer's.
		const block: TextContent = { type: "text", text: "Let me see", ...finalAnswer };
		const partial = assistantMessage([block]);
		agent.emitRaw({ type: "message_start", message: partial });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Let") });
		block.text = "Let me see: 4.";
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Let me see") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, ": 4.") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textEnd(partial) });
		agent.emitRaw({ type: "message_end", message: partial });
		expect(partials.map((shown) => [shown.text, shown.replace ?? false])).toEqual([
			["Let", false],
			["Let me see", true],
			["Let me see: 4.", false],
		]);
		expect(texts()).toEqual(["Let me see: 4."]);
	});

	it("takes the partial reply back, showing nothing of the replaced text, when the replacement does not start with the delta that revealed it", () => {
		const { agent, partials, texts } = harness();
		// A listener that lags: the commentary "Let me think" was replaced by "Let us see: 4." before
		// the listener read its deltas; "Let" looked like the answer's start, " me think" shows it was not.
		const block: TextContent = { type: "text", text: "Let us see: 4.", ...finalAnswer };
		const partial = assistantMessage([block]);
		agent.emitRaw({ type: "message_start", message: partial });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Let") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, " me think") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, "Let us see") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, ": 4.") });
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textEnd(partial) });
		agent.emitRaw({ type: "message_end", message: partial });
		expect(partials.map((shown) => [shown.text, shown.replace ?? false])).toEqual([
			["Let", false],
			["", true],
			["Let us see", false],
			["Let us see: 4.", false],
		]);
		expect(texts()).toEqual(["Let us see: 4."]);
	});

	it("leaves the text of earlier blocks when a later block turns out replaced (only the first text block's restart is the message's)", () => {
		const message = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
		message.ingestText(0, "delta", "First.", { blockText: "First." });
		message.endTextBlock(0);
		message.ingestText(1, "delta", "Hel", { blockText: "Hello" });
		message.ingestText(1, "delta", "lo", { blockText: "Bye" });
		message.finish();
		expect(message.cleanText.startsWith("First.")).toBe(true);
	});
});

describe("a final answer seen by a listener that lags behind the stream", () => {
	it("is delivered once, though the partial message already holds later deltas (it was garbled and repeated)", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		// The provider mutates one partial message as it streams; events handled late find it ahead.
		const deltas = ["Checking", " the logs.", " The answer", " is 42."];
		const whole = deltas.join("");
		const block: TextContent = { type: "text", text: "", ...commentary };
		const partial = assistantMessage([block]);
		agent.emitRaw({ type: "message_start", message: partial });
		deltas.forEach((delta, index) => {
			// Two deltas ahead: by the second delta's turn the block is known to be the answer.
			block.text = deltas.slice(0, index + 3).join("");
			block.textSignature = index === 0 ? commentary.textSignature : finalAnswer.textSignature;
			agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, delta) });
		});
		agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textEnd(partial, whole) });
		agent.emitRaw({ type: "message_end", message: partial });
		expect(blocks).toEqual([whole]);
	});
});

describe("a message-level commentary phase", () => {
	it("keeps a commentary message out of block and partial replies (P1)", () => {
		const { agent, blocks, partials, replies } = harness("message_end");
		agent.messageStart({ phase: "commentary", stopReason: "toolUse" });
		agent.delta("Need send.");
		agent.textEnd();
		agent.messageEnd("Need send.", { phase: "commentary", stopReason: "toolUse" });
		expect(blocks).toEqual([]);
		expect(partials).toEqual([]);
		expect(replies.assistantTexts).toEqual([]);
	});

	it("keeps it out of assistantTexts without onBlockReply too", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.messageEnd("Need send.", { phase: "commentary" });
		expect(replies.assistantTexts).toEqual([]);
	});

	it("lets a block's own final_answer signature win over the message phase", () => {
		const { agent, texts } = harness();
		agent.messageStart({ phase: "commentary" });
		agent.delta("Done.", 0, finalAnswer);
		agent.textEnd();
		expect(texts()).toEqual(["Done."]);
	});
});

// ---- property: any phase-tagged stream delivers exactly the final answer's visible text ----

type Carrier = "signature" | "message";

function textDelta(partial: AssistantMessage, delta: string, contentIndex = 0): AssistantMessageEvent {
	return { type: "text_delta", contentIndex, delta, partial };
}

function textEnd(partial: AssistantMessage, content?: string, contentIndex = 0): AssistantMessageEvent {
	const block = partial.content[contentIndex];
	const text = block?.type === "text" ? block.text : "";
	return { type: "text_end", contentIndex, content: content ?? text, partial };
}

/** A one-block message whose text and phase are as given (the phase on the block or the message). */
function phased(text: string, phase: "commentary" | "final_answer", carrier: Carrier): AssistantMessage {
	const block: TextContent = carrier === "signature" ? { type: "text", text, textSignature: phaseSignature(phase) } : { type: "text", text };
	const overrides: AssistantOverrides = carrier === "message" ? { phase } : {};
	return assistantMessage([block], overrides);
}

function visible(text: string): { clean: string; retracted: boolean } {
	const assembly = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
	assembly.ingestText(0, "delta", text);
	assembly.finish();
	return { clean: assembly.cleanText, retracted: assembly.takeRetracted() };
}

const WORDS = ["Hello", " world", "Done", ".", " ", "\n", "\n\n", "<think>", "</think>", "`", "[[reply_to_current]]", "MEDIA: /tmp/a.png\n", "NO_", "REPLY"];
const piecesArbitrary = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 });

function withoutBlankLines(text: string): string {
	return text.replace(/\n[ \t]*(?=\n)/g, "");
}

function fold(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

describe("phase-tagged streams (property)", () => {
	it("deliver exactly the visible text of the block's final answer, however the phase changes", () => {
		fc.assert(
			fc.property(
				piecesArbitrary,
				fc.nat(),
				fc.constantFrom("extends" as const, "replaces" as const),
				fc.constantFrom<Carrier>("signature", "message"),
				fc.constantFrom("text_end" as const, "message_end" as const),
				fc.boolean(),
				fc.integer({ min: 0, max: 3 }),
				(pieces, cutSeed, shape, carrier, mode, bareEnd, lagSeed) => {
					const cut = cutSeed % (pieces.length + 1);
					const commentaryText = pieces.slice(0, cut).join("");
					const finalPieces = pieces.slice(cut);
					const answer = shape === "extends" ? pieces.join("") : finalPieces.join("");
					const expected = visible(answer);
					fc.pre(!expected.retracted);
					const { agent, blocks, partials } = harness(mode);
					agent.emitRaw({ type: "message_start", message: phased("", "commentary", carrier) });
					const updates: { piece: string; partial: AssistantMessage }[] = [];
					let streamed = "";
					for (const piece of pieces.slice(0, cut)) {
						streamed += piece;
						updates.push({ piece, partial: phased(streamed, "commentary", carrier) });
					}
					streamed = shape === "extends" ? commentaryText : "";
					for (const piece of finalPieces) {
						streamed += piece;
						updates.push({ piece, partial: phased(streamed, "final_answer", carrier) });
					}
					// A listener that lags behind the stream reads a partial message that is some deltas
					// ahead of the event it handles: its text, and its phase, may be the replacement's already.
					// A replaced commentary delta is told by its text missing from the block, at once or, when
					// the replacement starts with it, at the first delta the block no longer starts with; a
					// replacement that repeats it ("Done" replaced by "DoneDone") cannot be told from the
					// answer by a lagging listener (a known limit, docs/reply.md; review-defects.test.ts has
					// the case it does tell).
					const lag = lagSeed;
					fc.pre(shape === "extends" || lag === 0 || pieces.slice(0, cut).every((piece) => !answer.startsWith(piece)));
					// Read in step with the stream, the commentary is invisible: every partial reply is the one
					// the answer alone, streamed plainly, makes at that point (the commentary it extends arrives
					// with its first delta as the answer).
					const plain = lag === 0 ? harness(mode) : undefined;
					plain?.agent.emitRaw({ type: "message_start", message: phased("", "final_answer", carrier) });
					let plainText = "";
					const shownNow = (partials: readonly PartialReply[]) => partials.at(-1)?.text ?? "";
					updates.forEach(({ piece }, index) => {
						const partial = updates[Math.min(index + lag, updates.length - 1)]?.partial ?? phased("", "commentary", carrier);
						agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, piece) });
						if (!plain || index < cut) return;
						const delta = index === cut && shape === "extends" ? commentaryText + piece : piece;
						plainText += delta;
						const plainPartial = phased(plainText, "final_answer", carrier);
						plain.agent.emitRaw({ type: "message_update", message: plainPartial, assistantMessageEvent: textDelta(plainPartial, delta) });
						expect(shownNow(partials)).toBe(shownNow(plain.partials));
					});
					const last = phased(answer, "final_answer", carrier);
					for (const target of plain ? [agent, plain.agent] : [agent]) {
						target.emitRaw({ type: "message_update", message: last, assistantMessageEvent: textEnd(last, bareEnd ? "" : answer) });
						target.emitRaw({ type: "message_end", message: last });
					}
					if (plain) expect(shownNow(partials)).toBe(shownNow(plain.partials));
					// Behind the stream too, no partial shows text that is not the answer's: a commentary
					// delta the block no longer holds is told at once and never shown (the cases the
					// precondition above keeps), so no partial has to be taken back either.
					// Compared without blank lines: an answer that ends inside a code fence is shown closed, and
					// the closing line comes after the blank lines a partial showed already (it only grows).
					for (const shown of partials) {
						expect(shown.replace).toBeUndefined();
						expect(withoutBlankLines(expected.clean).startsWith(withoutBlankLines(shown.text.trimEnd()))).toBe(true);
					}
					const delivered = blocks.map((block) => block.text ?? "").join("\n\n");
					// The answer is one block, sent with the fence it leaves open closed.
					expect(fold(delivered)).toBe(fold(withOpenFenceClosed(expected.clean.trim())));
					// Trailing whitespace may differ: the block end separates blocks inside an unclosed fence.
					const shown = partials.at(-1)?.text ?? "";
					expect(withoutBlankLines(shown.trimEnd())).toBe(withoutBlankLines(expected.clean.trimEnd()));
				},
			),
			// CI stress, seed 269564454: a partial had shown the blank line after an unclosed fence's code,
			// and closing the fence at the block's end dropped it: the partial was taken back.
			{ numRuns: 600, examples: [[["`", "`", "`", "\n\n"], 0, "extends", "signature", "text_end", false, 0]] },
		);
	});

	it("deliver nothing when the block stays commentary to the end", () => {
		fc.assert(
			fc.property(piecesArbitrary, fc.constantFrom<Carrier>("signature", "message"), (pieces, carrier) => {
				const { agent, blocks, partials, replies } = harness();
				agent.emitRaw({ type: "message_start", message: phased("", "commentary", carrier) });
				let streamed = "";
				for (const piece of pieces) {
					streamed += piece;
					const partial = phased(streamed, "commentary", carrier);
					agent.emitRaw({ type: "message_update", message: partial, assistantMessageEvent: textDelta(partial, piece) });
				}
				const last = phased(streamed, "commentary", carrier);
				agent.emitRaw({ type: "message_update", message: last, assistantMessageEvent: textEnd(last) });
				agent.emitRaw({ type: "message_end", message: last });
				expect(blocks).toEqual([]);
				expect(partials).toEqual([]);
				expect(replies.assistantTexts).toEqual([]);
			}),
			{ numRuns: 200 },
		);
	});
});

// ---- on a real Agent: a provider that replaces the commentary, read by a subscriber that lags ----

describe("a commentary the provider replaces, on a real Agent", () => {
	/**
	 * An OpenAI-Responses-like stream function: the block streams as commentary, then the provider
	 * replaces its text and phase with the answer's, right after pushing the last commentary delta,
	 * as a provider that handles several server events in one chunk does. The Agent hands the
	 * events to listeners later, when the partial message already holds the replacement.
	 */
	const replacingStreamFn: StreamFn = (model) => {
		const stream = createAssistantMessageEventStream();
		const output = assistantMessage([], { api: model.api, provider: model.provider, model: model.id });
		const block: TextContent = { type: "text", text: "", textSignature: phaseSignature("commentary", "item") };
		void (async () => {
			stream.push({ type: "start", partial: output });
			output.content.push(block);
			stream.push({ type: "text_start", contentIndex: 0, partial: output });
			for (const delta of ["Let me ", "check."]) {
				block.text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial: output });
			}
			block.text = "";
			block.textSignature = phaseSignature("final_answer", "item");
			for (const delta of ["It is ", "4."]) {
				await Promise.resolve();
				block.text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial: output });
			}
			stream.push({ type: "text_end", contentIndex: 0, content: block.text, partial: output });
			stream.push({ type: "done", reason: "stop", message: output });
		})();
		return stream;
	};

	for (const slowListener of [false, true]) {
		it(`sends only the answer${slowListener ? ", also behind a slow listener" : ""}`, async () => {
			const scripted = createScriptedModel([]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: replacingStreamFn });
			if (slowListener) {
				agent.subscribe(async (event) => {
					if (event.type === "message_update") for (let tick = 0; tick < 5; tick += 1) await Promise.resolve();
				});
			}
			const blocks: string[] = [];
			const replies = subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
			await agent.prompt("What is 2 + 2?");
			replies.unsubscribe();
			expect(blocks).toEqual(["It is 4."]);
			expect(replies.assistantTexts).toEqual(["It is 4."]);
		});
	}
});
