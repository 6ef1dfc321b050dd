type Tree = {
    name?: string;
    child?: unknown;
}