type Tu = {
    p?: [string, number];
    i?: [boolean];
    any?: unknown[];
}