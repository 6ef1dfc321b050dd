/* written by the agent */
export default async () => 1