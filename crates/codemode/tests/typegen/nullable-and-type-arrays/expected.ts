type N = {
    s?: string | null;
    t?: string | null | number | unknown[] | Record<string, unknown> | unknown;
    u?: unknown;
}