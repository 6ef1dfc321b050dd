type NoDescInput = Record<string, unknown>
type NoDescOutput = unknown
type DocInput = {
    /** multi line */
    p?: string;
}
type DocOutput = unknown

declare const codemode: {
	/**
	 * no_desc
	 */
	no_desc: (input: NoDescInput) => Promise<NoDescOutput>;

	/**
	 * Ends a comment *\/ here next
	 * @param input.p - multi line
	 */
	doc: (input: DocInput) => Promise<DocOutput>;
}