type R = {
    a?: string;
    b?: number;
    c?: unknown;
    d?: unknown;
}