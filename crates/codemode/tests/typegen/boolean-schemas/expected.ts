type B = {
    anything?: unknown;
    nothing: never;
}