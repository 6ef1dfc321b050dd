type CreateIssueInput = {
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Issue title */
    title: string;
    /** Issue body */
    body?: string;
    /** Labels to add */
    labels?: string[];
}
type CreateIssueOutput = unknown
type ListIssuesInput = {
    owner: string;
    repo: string;
    state?: "open" | "closed" | "all";
    per_page?: number;
}
type ListIssuesOutput = unknown

declare const codemode: {
	/**
	 * Create a GitHub issue
	 * @param input.owner - Repository owner
	 * @param input.repo - Repository name
	 * @param input.title - Issue title
	 * @param input.body - Issue body
	 * @param input.labels - Labels to add
	 */
	create_issue: (input: CreateIssueInput) => Promise<CreateIssueOutput>;

	/**
	 * List issues in a repository
	 */
	list_issues: (input: ListIssuesInput) => Promise<ListIssuesOutput>;
}