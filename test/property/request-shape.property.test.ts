/**
 * Property: whatever the transcript, the request the built-in providers make of it is one the
 * API accepts. A transcript is not always what the loop wrote: an application edits
 * `state.messages`, a session is restored or compacted, a reply fails after its calls were
 * answered, a result arrives twice. A result that answers no call of the turn before it, or a
 * call with no result, is answered with a 400 on that request and on every later one, since
 * each resends the transcript: the session is stuck. The Anthropic converter sent such results
 * as they were (a result after a failed reply, after a user message, or twice) until a probe
 * found it; the OpenAI converter left them out. Transcripts are drawn from user messages,
 * replies of every stop reason with up to three calls, and results, the ids from a pool of
 * three so that they collide.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AssistantMessage, Message } from "../../src/types/messages.js";

// A pure conversion: hundreds of runs take a fraction of a second.
const NUM_RUNS = Math.max(500, Number(process.env["PROPERTY_RUNS"] ?? 0));
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

const idArb = fc.constantFrom("toolu_a", "toolu_b", "toolu_c");

const assistantArb: fc.Arbitrary<Message> = fc
	.record({
		text: fc.constantFrom("", "an answer"),
		calls: fc.array(idArb, { maxLength: 3 }),
		stopReason: fc.constantFrom<AssistantMessage["stopReason"]>("stop", "toolUse", "error", "aborted", "length"),
	})
	.map(({ text, calls, stopReason }): AssistantMessage => ({
		role: "assistant",
		content: [...(text === "" ? [] : [{ type: "text" as const, text }]), ...calls.map((id) => ({ type: "toolCall" as const, id, name: "read", arguments: {} }))],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-6",
		usage: emptyUsage(),
		stopReason,
		...(stopReason === "error" || stopReason === "aborted" ? { errorMessage: "failed" } : {}),
		timestamp: 2,
	}));

const messageArb: fc.Arbitrary<Message> = fc.oneof(
	fc.constant<Message>({ role: "user", content: "go on", timestamp: 1 }),
	assistantArb,
	assistantArb,
	idArb.map((toolCallId): Message => ({ role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text: "result" }], isError: false, timestamp: 3 })),
);

describe("the request made of any transcript", () => {
	it(`property: Anthropic's and OpenAI's requests answer every call once and hold no result without its call (seed ${SEED})`, () => {
		fc.assert(
			fc.property(fc.array(messageArb, { minLength: 1, maxLength: 12 }), (transcript) => {
				// The transcript's own problems are the input here; only what a provider would be sent is judged.
				const sent = providerRequestViolations([{ role: "user", content: "start", timestamp: 0 }, ...transcript]).filter((violation) => /^next request: (anthropic|openai)/.test(violation));
				expect(sent).toEqual([]);
			}),
			{ numRuns: NUM_RUNS, seed: SEED },
		);
	}, Math.max(30_000, NUM_RUNS * 20));
});
