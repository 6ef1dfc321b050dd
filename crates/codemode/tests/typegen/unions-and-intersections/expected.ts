type U = {
    u?: string | number;
    o?: boolean | null;
    i?: {
        a?: string;
    } & {
        b?: number;
    };
}