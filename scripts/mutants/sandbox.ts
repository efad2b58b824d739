/**
 * A throwaway copy of the repository to mutate: others edit the working tree while the
 * mutants run, so nothing is ever written there.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import type { Mutant, Patch } from "./catalogue.js";

/** Top-level entries not copied: dependencies are symlinked, history is not needed. */
const SKIPPED = new Set(["node_modules", ".git"]);

/** A repository copy with its node_modules symlinked to the original's. */
export interface Sandbox {
	root: string;
	/** Applies a mutant's patches; returns a function that restores the originals. */
	apply(mutant: Mutant): () => void;
	/** Deletes the copy. */
	remove(): void;
}

/** Thrown when a mutant's anchor is missing or ambiguous. */
export class AnchorError extends Error {}

function occurrences(text: string, needle: string): number {
	let count = 0;
	for (let index = text.indexOf(needle); index >= 0; index = text.indexOf(needle, index + needle.length)) count++;
	return count;
}

/**
 * Checks that a patch's anchor occurs exactly once in `text`; throws an {@link AnchorError}
 * naming the mutant otherwise.
 *
 * @example
 * checkAnchor(source, patch, "drop-steering");
 */
export function checkAnchor(text: string, patch: Patch, mutantId: string): void {
	const count = occurrences(text, patch.from);
	if (count !== 1) {
		const first = patch.from.split("\n")[0]?.trim() ?? "";
		throw new AnchorError(
			`mutant ${mutantId}: the anchor in ${patch.file} occurs ${count} times (must be exactly once): "${first}${patch.from.includes("\n") ? " ..." : ""}"`,
		);
	}
}

/**
 * Validates every anchor of every mutant against the files under `root` (no copy needed).
 *
 * @example
 * checkAllAnchors(process.cwd(), MUTANTS); // throws on the first broken anchor
 */
export function checkAllAnchors(root: string, mutants: readonly Mutant[]): void {
	const problems: string[] = [];
	for (const mutant of mutants) {
		for (const patch of mutant.patches) {
			if (!patch.file.startsWith("src/")) problems.push(`mutant ${mutant.id}: ${patch.file} is not under src/`);
			try {
				checkAnchor(readFileSync(join(root, patch.file), "utf8"), patch, mutant.id);
			} catch (error) {
				problems.push(error instanceof Error ? error.message : String(error));
			}
		}
	}
	if (problems.length > 0) throw new AnchorError(problems.join("\n"));
}

/**
 * Copies the repository at `source` into a new temporary directory (without node_modules
 * and .git) and symlinks node_modules.
 *
 * @example
 * const sandbox = createSandbox(process.cwd());
 * const restore = sandbox.apply(mutant); try { ... } finally { restore(); }
 */
export function createSandbox(source: string): Sandbox {
	const root = mkdtempSync(join(tmpdir(), `agentchart-mutants-`));
	cpSync(source, root, {
		recursive: true,
		filter: (path) => {
			const rel = relative(source, path);
			return rel === "" || !SKIPPED.has(rel.split(/[\\/]/)[0] ?? "") || basename(path) === "";
		},
	});
	symlinkSync(join(source, "node_modules"), join(root, "node_modules"), "dir");
	return {
		root,
		apply(mutant) {
			const originals = new Map<string, string>();
			try {
				for (const patch of mutant.patches) {
					const path = join(root, patch.file);
					const text = originals.get(path) ?? readFileSync(path, "utf8");
					if (!originals.has(path)) originals.set(path, text);
					const current = readFileSync(path, "utf8");
					checkAnchor(current, patch, mutant.id);
					writeFileSync(path, current.replace(patch.from, () => patch.to));
				}
			} catch (error) {
				for (const [path, text] of originals) writeFileSync(path, text);
				throw error;
			}
			return () => {
				for (const [path, text] of originals) writeFileSync(path, text);
			};
		},
		remove() {
			rmSync(root, { recursive: true, force: true });
		},
	};
}
