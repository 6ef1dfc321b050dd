type GetUserInput = {
    id: string;
}
type GetUserOutput = {
    name: string;
    email: string;
}

declare const codemode: {
	/**
	 * Get a user
	 */
	getUser: (input: GetUserInput) => Promise<GetUserOutput>;
}