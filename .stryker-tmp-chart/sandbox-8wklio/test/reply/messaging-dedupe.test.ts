// @ts-nocheck
import { describe, expect, it } from "vitest";
import {
	isMessagingToolDuplicate,
	MessagingSendLog,
	normalizeTextForComparison,
} from "../../src/reply/messaging-dedupe.js";

describe("normalizeTextForComparison (DD1–DD5)", () => {
	it.each([
		["Hello World", "hello world"],
		["  hello  ", "hello"],
		["hello    world", "hello world"],
		["Hello 👋 World 🌍", "hello world"],
		["  Hello 👋   WORLD  🌍  ", "hello world"],
	])("normalises %j to %j", (input, expected) => {
		expect(normalizeTextForComparison(input)).toBe(expected);
	});
});

describe("isMessagingToolDuplicate (DD6–DD13)", () => {
	it("is false without sent texts", () => expect(isMessagingToolDuplicate("hello world", [])).toBe(false));
	it("ignores texts below 10 characters", () => expect(isMessagingToolDuplicate("short", ["short"])).toBe(false));
	it("matches an exact text", () =>
		expect(isMessagingToolDuplicate("Hello, this is a test message!", ["Hello, this is a test message!"])).toBe(true));
	it("ignores case", () =>
		expect(isMessagingToolDuplicate("HELLO, THIS IS A TEST MESSAGE!", ["hello, this is a test message!"])).toBe(true));
	it("ignores emoji", () =>
		expect(isMessagingToolDuplicate("Hello! 👋 This is a test message!", ["Hello! This is a test message!"])).toBe(true));
	it("matches when the text contains a sent text", () =>
		expect(isMessagingToolDuplicate('I sent the message: "Hello, this is a test message!"', ["Hello, this is a test message!"])).toBe(true));
	it("matches when a sent text contains the text", () =>
		expect(isMessagingToolDuplicate("Hello, this is a test message!", ['I sent the message: "Hello, this is a test message!"'])).toBe(true));
	it("does not match unrelated texts", () =>
		expect(isMessagingToolDuplicate("Something completely different", ["Hello, this is a test message!"])).toBe(false));
});

describe("MessagingSendLog", () => {
	it("commits on success, discards on failure, never suppresses on a pending send", () => {
		const log = new MessagingSendLog();
		log.begin("a", { text: "This is the answer." });
		expect(log.isDuplicate("This is the answer.")).toBe(false);
		log.settle("a", false);
		expect(log.texts).toEqual([]);
		log.begin("b", { text: "This is the answer." });
		log.settle("b", true);
		expect(log.isDuplicate("this is the answer.")).toBe(true);
	});

	it("keeps the last 200 sends, oldest out first (AA23)", () => {
		const log = new MessagingSendLog<string>();
		for (let index = 0; index <= 200; index += 1) {
			log.begin(`c${index}`, { text: `message number ${index}`, target: `t${index}` });
			log.settle(`c${index}`, true);
		}
		expect(log.texts).toHaveLength(200);
		expect(log.texts[0]).toBe("message number 1");
		expect(log.texts[199]).toBe("message number 200");
		expect(log.targets[0]).toBe("t1");
		expect(log.isDuplicate("message number 0")).toBe(false);
	});
});
