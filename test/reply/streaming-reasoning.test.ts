/**
 * Streamed reasoning is formatted piece by piece (`StreamingReasoningFormat`), so a long reasoning
 * stream costs each delta its own length. Whatever the pieces, the blocks and their order, what it
 * shows must be exactly `formatReasoningMessage` of all the reasoning so far, and it must say it
 * changed exactly when that text did (the reply layer sends an update only then).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageAssembly } from "../../src/reply/message-assembly.js";
import { formatReasoningMessage, StreamingReasoningFormat } from "../../src/reply/reasoning-format.js";

const PIECES = ["word", "a b", " ", "  ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "x", "."];
const piecesArbitrary = fc.array(fc.constantFrom(...PIECES), { maxLength: 12 });

/** What `MessageAssembly.reasoningText` makes of native blocks: each trimmed, the empty left out, a blank line between. */
function joined(blocks: string[]): string {
	return blocks
		.map((block) => block.trim())
		.filter((block) => block !== "")
		.join("\n\n");
}

describe("formatting streamed reasoning piece by piece", () => {
	it("shows formatReasoningMessage of everything so far, after every piece, and says when it changed", () => {
		fc.assert(
			fc.property(fc.array(piecesArbitrary, { maxLength: 4 }), (blocks) => {
				const format = new StreamingReasoningFormat();
				const sofar: string[] = [];
				let shown = "";
				for (const block of blocks) {
					format.endBlock();
					sofar.push("");
					for (const piece of block) {
						sofar[sofar.length - 1] += piece;
						const changed = format.append(piece);
						const expected = formatReasoningMessage(joined(sofar));
						expect(format.text).toBe(expected);
						expect(changed).toBe(expected !== shown);
						shown = expected;
					}
				}
			}),
			{ numRuns: 500 },
		);
	});

	it("keeps a block's inner blank lines and gives blocks one blank line between them", () => {
		const format = new StreamingReasoningFormat();
		format.append("  first\n\n\nsecond  \n\n");
		format.endBlock();
		format.append("\n\n third");
		expect(format.text).toBe("Reasoning:\n_first_\n\n\n_second_\n\n_third_");
	});

	it("a message's thinking blocks, in any order of arrival, read as reasoningText formatted", () => {
		const step = fc.record({ block: fc.integer({ min: 0, max: 3 }), piece: fc.constantFrom(...PIECES) });
		fc.assert(
			fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
				const assembly = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
				let version = assembly.reasoningVersion;
				let shown = assembly.formattedReasoning;
				for (const { block, piece } of steps) {
					assembly.ingestThinking(block, "delta", piece);
					const expected = formatReasoningMessage(assembly.reasoningText);
					expect(assembly.formattedReasoning).toBe(expected);
					if (expected !== shown) expect(assembly.reasoningVersion).not.toBe(version);
					version = assembly.reasoningVersion;
					shown = expected;
				}
			}),
			{ numRuns: 500 },
		);
	});

	it("reasoning in tags, also when an orphan closing tag takes visible text back, reads as reasoningText formatted", () => {
		const tokens = [...PIECES, "<think>", "</think>", "<thinking>", "</thinking>", "plan", "answer"];
		fc.assert(
			fc.property(fc.array(fc.constantFrom(...tokens), { maxLength: 30 }), (pieces) => {
				const assembly = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
				for (const piece of pieces) {
					assembly.ingestText(0, "delta", piece);
					expect(assembly.formattedReasoning).toBe(formatReasoningMessage(assembly.reasoningText));
				}
				assembly.finish();
				expect(assembly.formattedReasoning).toBe(formatReasoningMessage(assembly.reasoningText));
			}),
			{ numRuns: 500 },
		);
	});
});
