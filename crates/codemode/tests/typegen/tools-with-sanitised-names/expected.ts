type SearchInput = {
    query: string;
    limit?: number;
}
type SearchOutput = unknown
type GetItemInput = {
    id: string;
}
type GetItemOutput = unknown

declare const codemode: {
	/**
	 * Search for items
	 */
	search: (input: SearchInput) => Promise<SearchOutput>;

	/**
	 * Get an item by ID
	 */
	get_item: (input: GetItemInput) => Promise<GetItemOutput>;
}